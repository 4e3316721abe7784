DROP INDEX payment_sessions_challenge_expiry;
CREATE INDEX payment_sessions_processing ON payment_sessions (updated_at) WHERE state = 4;
ALTER TABLE payment_sessions DROP COLUMN current_attempt_id;
DROP INDEX payment_attempts_due;
ALTER TABLE payment_attempts DROP COLUMN next_check_at;
ALTER TABLE payment_attempts DROP COLUMN checks;
ALTER TABLE payment_attempts DROP COLUMN return_url;
ALTER TABLE payment_attempts DROP COLUMN payment_method;
ALTER TABLE payment_attempts DROP CONSTRAINT payment_attempts_state_check;
UPDATE payment_attempts SET state = CASE state
        WHEN 'requires_action' THEN 'challenge_required'
        WHEN 'succeeded' THEN 'approved'
        WHEN 'authorized' THEN 'approved'
        WHEN 'nothing_charged' THEN 'rejected'
        WHEN 'unknown' THEN 'unresolved'
        ELSE state END;
ALTER TABLE payment_attempts RENAME COLUMN state TO outcome;
ALTER TABLE payment_attempts ADD CONSTRAINT payment_attempts_outcome_check CHECK (outcome IN (
    'sent', 'challenge_required', 'approved', 'declined', 'rejected', 'unresolved', 'voided'));
