-- E-mail receipts: a transactional outbox. The statement that records a card attempt's
-- answer (attempt_writes.rs) queues the session's receipt mail in the same statement when it
-- moves the session to Successful (1) or ApprovedTransaction (3) and the session has the
-- payer's address. One per session at most (the unique key; a later capture, replay or race
-- queues nothing). The mail's content is read from the session, its attempt and its
-- terminal when it is sent: the row keeps no address and no card data. Additive: the
-- previous release neither reads nor writes it.
CREATE TABLE receipt_mails (
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    session_id      uuid        NOT NULL UNIQUE REFERENCES payment_sessions (id) ON DELETE CASCADE,
    -- The attempt that paid: its brand, last four digits and time are the receipt's.
    attempt_id      uuid        NOT NULL REFERENCES payment_attempts (id) ON DELETE CASCADE,
    terminal_number text        NOT NULL,
    -- MailState::as_str.
    state           text        NOT NULL DEFAULT 'pending'
                                CHECK (state IN ('pending', 'sent', 'failed')),
    attempts        integer     NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL,
    -- The worker's lease while it sends.
    claim           uuid,
    claimed_until   timestamptz,
    -- The mail server's (or the connection's) last failure.
    last_error      text        CHECK (length(last_error) <= 500),
    created_at      timestamptz NOT NULL,
    sent_at         timestamptz
);
CREATE INDEX receipt_mails_due ON receipt_mails (next_attempt_at) WHERE state = 'pending';
CREATE INDEX receipt_mails_terminal ON receipt_mails (terminal_number, created_at);
