-- Reconciliation looks only at sessions in Processing (4), the longest-waiting first.
CREATE INDEX payment_sessions_processing ON payment_sessions (updated_at) WHERE state = 4;

-- An optional per-terminal allowlist of the hosts callback URLs may point to. NULL: any host
-- that the environment's callback rule accepts.
ALTER TABLE terminals
    ADD COLUMN callback_hosts text[]
    CHECK (callback_hosts IS NULL OR array_position(callback_hosts, NULL) IS NULL);
