-- A client's secret rotated in place: the previous secret's Argon2id hash is kept, and keeps
-- issuing tokens, until the overlap the operator chose ends (`checkout client rotate-secret`).
ALTER TABLE oauth_clients
    ADD COLUMN previous_secret_hash text,
    ADD COLUMN previous_secret_expires_at timestamptz,
    ADD CONSTRAINT oauth_clients_previous_secret_pair CHECK (
        (previous_secret_hash IS NULL) = (previous_secret_expires_at IS NULL)
    ),
    ADD CONSTRAINT oauth_clients_previous_secret_is_argon2id CHECK (
        previous_secret_hash IS NULL OR previous_secret_hash LIKE '$argon2id$%'
    );
