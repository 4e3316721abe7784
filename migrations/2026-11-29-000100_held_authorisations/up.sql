-- The reconciliation sweep reads at the processor the authorisations held uncaptured longer
-- than `reconcile_hold_check_after_seconds` (did one expire there?). It finds them by their
-- authorised attempt: `next_check_at` of an authorized attempt is when its hold is next checked
-- (NULL: never yet; far future: its session moved on, never again). No index on
-- payment_sessions, whose state changes stay heap-only updates.
CREATE INDEX payment_attempts_held ON payment_attempts (next_check_at NULLS FIRST)
    WHERE state = 'authorized';
