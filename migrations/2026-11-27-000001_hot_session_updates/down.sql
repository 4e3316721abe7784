ALTER TABLE payment_sessions RESET (fillfactor);

CREATE UNIQUE INDEX payment_sessions_reference_held
    ON payment_sessions (terminal_number, merchant_reference)
    WHERE state <> 6;
CREATE INDEX payment_sessions_pending_expiry ON payment_sessions (expires_at) WHERE state = 0;
CREATE INDEX payment_sessions_challenge_expiry ON payment_sessions (expires_at) WHERE state = 5;

DROP INDEX payment_sessions_held_reference;
DROP INDEX payment_sessions_pending_until;
DROP INDEX payment_sessions_challenge_until;

ALTER TABLE payment_sessions
    DROP COLUMN held_reference,
    DROP COLUMN pending_until,
    DROP COLUMN challenge_until;
