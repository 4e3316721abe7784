-- The reconciliation backlog (checkout_reconciliation_backlog and its oldest age, read after
-- every reconciliation sweep) counts the unresolved attempts: 'sent' and 'unknown', including
-- those given up for manual review, whose next check is NULL. payment_attempts_due leaves
-- those out, so the count read every attempt ever made (85 ms at 100,000 attempts, growing
-- with the table). This index holds only the unresolved ones: an attempt enters it when it is
-- sent and leaves it with its answer.
CREATE INDEX payment_attempts_unresolved ON payment_attempts (created_at)
    WHERE state IN ('sent', 'unknown');
