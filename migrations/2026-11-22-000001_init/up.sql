-- The hosted checkout schema: terminals, their OAuth clients, payment sessions with their
-- line items, additional charges and payment attempts.
-- Money is NUMERIC (exact); ids are uuid; times are timestamptz (UTC, microseconds).

CREATE TABLE terminals (
    number       text        PRIMARY KEY CHECK (number ~ '^[A-Za-z0-9_-]{1,32}$'),
    display_name text        NOT NULL,
    active       boolean     NOT NULL DEFAULT true,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE oauth_clients (
    client_id       text        PRIMARY KEY CHECK (client_id <> ''),
    -- The secret's Argon2id hash in PHC form; never the secret itself.
    secret_hash     text        NOT NULL CHECK (secret_hash LIKE '$argon2id$%'),
    terminal_number text        NOT NULL REFERENCES terminals (number),
    roles           text[]      NOT NULL DEFAULT '{}' CHECK (array_position(roles, NULL) IS NULL),
    active          boolean     NOT NULL DEFAULT true,
    created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX oauth_clients_terminal ON oauth_clients (terminal_number);

CREATE TABLE payment_sessions (
    id                   uuid          PRIMARY KEY,
    terminal_number      text          NOT NULL REFERENCES terminals (number),
    merchant_reference   text          NOT NULL CHECK (char_length(merchant_reference) BETWEEN 1 AND 64),
    internal_reference   text          NOT NULL,
    -- 'checkout' (start payment, with callbacks) or 'link' (payment link, without).
    kind                 text          NOT NULL CHECK (kind IN ('checkout', 'link')),
    callback_success_url text,
    callback_fail_url    text,
    callback_back_url    text,
    amount               numeric(19,4) NOT NULL CHECK (amount > 0),
    currency             text          NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    description          text,
    email                text,
    culture              text          CHECK (culture IN ('es', 'en')),
    -- SessionState::code(): 0 Pending, 1 Successful, 2 Failed, 3 ApprovedTransaction,
    -- 4 Processing, 5 ChallengeRequired, 6 Expired, 7 Cancelled.
    state                smallint      NOT NULL CHECK (state BETWEEN 0 AND 7),
    expires_at           timestamptz   NOT NULL,
    created_at           timestamptz   NOT NULL,
    updated_at           timestamptz   NOT NULL,
    CONSTRAINT payment_sessions_internal_reference_key UNIQUE (internal_reference),
    CONSTRAINT payment_sessions_callbacks CHECK (
        (kind = 'checkout' AND callback_success_url IS NOT NULL AND callback_fail_url IS NOT NULL)
        OR (kind = 'link' AND callback_success_url IS NULL AND callback_fail_url IS NULL
            AND callback_back_url IS NULL)
    )
);

-- A merchant reference is unique per terminal among the sessions that hold it: every state
-- but Expired (SessionState::holds_reference). Racing inserts cannot both win.
CREATE UNIQUE INDEX payment_sessions_reference_held
    ON payment_sessions (terminal_number, merchant_reference)
    WHERE state <> 6;

-- The expiry sweep looks only at Pending sessions.
CREATE INDEX payment_sessions_pending_expiry ON payment_sessions (expires_at) WHERE state = 0;

CREATE TABLE session_items (
    session_id  uuid          NOT NULL REFERENCES payment_sessions (id) ON DELETE CASCADE,
    position    integer       NOT NULL CHECK (position >= 0),
    item_code   text,
    quantity    bigint        NOT NULL CHECK (quantity BETWEEN 1 AND 4294967295),
    description text,
    amount      numeric(19,4) NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (session_id, position)
);

CREATE TABLE session_charges (
    session_id uuid          NOT NULL REFERENCES payment_sessions (id) ON DELETE CASCADE,
    position   integer       NOT NULL CHECK (position >= 0),
    name       text,
    amount     numeric(19,4) NOT NULL CHECK (amount >= 0),
    PRIMARY KEY (session_id, position)
);

-- One row per card submission. Brand and last four digits only: NEVER the card number,
-- the expiry or the CVV.
CREATE TABLE payment_attempts (
    id                  uuid        PRIMARY KEY,
    seq                 bigint      GENERATED ALWAYS AS IDENTITY,
    session_id          uuid        NOT NULL REFERENCES payment_sessions (id) ON DELETE CASCADE,
    card_brand          text        NOT NULL
        CHECK (card_brand IN ('visa', 'mastercard', 'amex', 'discover', 'other')),
    card_last4          text        NOT NULL CHECK (card_last4 ~ '^[0-9]{4}$'),
    processor_reference text,
    challenge_url       text,
    outcome             text        NOT NULL CHECK (outcome IN ('sent', 'challenge_required',
        'approved', 'declined', 'rejected', 'unresolved', 'voided')),
    svc_code            text        CHECK (svc_code ~ '^SVC_[0-9]{3}$'),
    created_at          timestamptz NOT NULL,
    updated_at          timestamptz NOT NULL
);
CREATE INDEX payment_attempts_session ON payment_attempts (session_id, created_at DESC, seq DESC);

COMMENT ON TABLE payment_attempts IS
    'Card submissions: brand and last four digits only, never the card number, expiry or CVV.';
