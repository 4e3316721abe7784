-- The payment-attempt ledger: explicit attempt states, what a replay needs, when
-- reconciliation next asks the processor, and the session's current attempt.

ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_outcome_check;
ALTER TABLE payment_attempts RENAME COLUMN outcome TO state;
UPDATE payment_attempts a SET state = CASE a.state
        WHEN 'challenge_required' THEN 'requires_action'
        WHEN 'approved' THEN CASE WHEN s.state = 3 THEN 'authorized' ELSE 'succeeded' END
        WHEN 'rejected' THEN 'nothing_charged'
        WHEN 'unresolved' THEN 'unknown'
        WHEN 'voided' THEN 'nothing_charged'
        ELSE a.state END
    FROM payment_sessions s WHERE s.id = a.session_id;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_state_check CHECK (state IN (
    'sent', 'requires_action', 'succeeded', 'authorized', 'declined', 'nothing_charged',
    'unknown', 'voided'));

-- The processor's payment-method reference the authorisation was asked for with: what a
-- replay of the same request needs. Never card data. Empty for attempts made before it.
ALTER TABLE payment_attempts ADD COLUMN payment_method text NOT NULL DEFAULT '';
ALTER TABLE payment_attempts ALTER COLUMN payment_method DROP DEFAULT;
-- The return address sent with the authorisation: a replay must be the same request, even
-- from an instance whose own address differs.
ALTER TABLE payment_attempts ADD COLUMN return_url text NOT NULL DEFAULT '';
ALTER TABLE payment_attempts ALTER COLUMN return_url DROP DEFAULT;
-- Reconciliation: how often it asked without an answer, and when it asks next (unresolved
-- attempts, and challenges the payer may finish at the processor without coming back).
ALTER TABLE payment_attempts ADD COLUMN checks integer NOT NULL DEFAULT 0 CHECK (checks >= 0);
ALTER TABLE payment_attempts ADD COLUMN next_check_at timestamptz;
UPDATE payment_attempts SET next_check_at = now()
    WHERE state IN ('sent', 'unknown', 'requires_action');
CREATE INDEX payment_attempts_due ON payment_attempts (next_check_at)
    WHERE state IN ('sent', 'unknown', 'requires_action') AND next_check_at IS NOT NULL;

-- Only an answer about the current attempt may move a session.
ALTER TABLE payment_sessions ADD COLUMN current_attempt_id uuid;
UPDATE payment_sessions s SET current_attempt_id = (
    SELECT a.id FROM payment_attempts a WHERE a.session_id = s.id
    ORDER BY a.created_at DESC, a.seq DESC LIMIT 1);

-- Reconciliation now follows attempts; expiry also looks at sessions waiting for a challenge.
DROP INDEX payment_sessions_processing;
CREATE INDEX payment_sessions_challenge_expiry ON payment_sessions (expires_at) WHERE state = 5;
