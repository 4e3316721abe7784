-- Idempotency keys of the create routes (start-payment, generate-payment-link), per terminal
-- (IETF httpapi idempotency-key draft). The first request with a key claims it (a record with
-- its request's fingerprint and a lease); when it finishes with a response worth keeping
-- (2xx, or a 4xx about the request) that response is saved here and replayed to retries with
-- the same key and fingerprint. A 5xx deletes the claim; a claim whose lease ends without a
-- response (the process died) is taken over by the next request with the key. Records are
-- forgotten 24 hours after their creation: claims ignore older ones, and the expiry sweep
-- deletes them.
CREATE TABLE idempotency_keys (
    terminal_number text        NOT NULL REFERENCES terminals (number),
    -- 1 to 255 visible ASCII characters.
    idempotency_key text        NOT NULL CHECK (idempotency_key ~ '^[!-~]{1,255}$'),
    -- SHA-256 of the request's method, path and exact body bytes.
    fingerprint     bytea       NOT NULL CHECK (octet_length(fingerprint) = 32),
    -- Changes with every claim: only the current claim may save or release the key.
    claim_token     uuid        NOT NULL,
    created_at      timestamptz NOT NULL,
    locked_until    timestamptz NOT NULL,
    -- The saved response, once there is one: all three or none.
    response_status smallint    CHECK (response_status BETWEEN 200 AND 499),
    response_type   text,
    response_body   bytea,
    completed_at    timestamptz,
    PRIMARY KEY (terminal_number, idempotency_key),
    CONSTRAINT idempotency_keys_response CHECK (
        (response_status IS NULL AND response_type IS NULL AND response_body IS NULL
            AND completed_at IS NULL)
        OR (response_status IS NOT NULL AND response_type IS NOT NULL
            AND response_body IS NOT NULL AND completed_at IS NOT NULL)
    )
);

-- The sweep deletes the records past the replay window, oldest first.
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);
