ALTER TABLE oauth_clients
    DROP CONSTRAINT oauth_clients_previous_secret_is_argon2id,
    DROP CONSTRAINT oauth_clients_previous_secret_pair,
    DROP COLUMN previous_secret_expires_at,
    DROP COLUMN previous_secret_hash;
