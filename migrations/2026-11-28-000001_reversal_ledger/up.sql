-- The reversal ledger: captures and voids get rows of their own, like refunds, and every
-- capture, void and refund keeps the merchant's Idempotency-Key and its next reconciliation
-- check. Additive only: the previous release reads and writes payment_refunds as before
-- (its inserts leave the new columns NULL, which means "no key" and "not scheduled").

-- A merchant's key names one refund of its session for good.
ALTER TABLE payment_refunds ADD COLUMN idempotency_key text;
-- When the reconciliation sweep next asks the processor about an unsettled refund (NULL:
-- settled, or left for review).
ALTER TABLE payment_refunds ADD COLUMN next_check_at timestamptz;
CREATE UNIQUE INDEX payment_refunds_key ON payment_refunds (session_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX payment_refunds_due ON payment_refunds (next_check_at)
    WHERE state IN ('sent', 'unknown') AND next_check_at IS NOT NULL;
-- Refunds left unsettled by the previous release (no next check) are checked at once.
UPDATE payment_refunds SET next_check_at = updated_at
    WHERE state IN ('sent', 'unknown') AND next_check_at IS NULL;

-- One row per capture or void of an authorisation held without capture (a session in
-- ApprovedTransaction), written (state 'sent') BEFORE the processor is asked; its id derives
-- the processor idempotency key. At most one action per session reserves the authorisation
-- (every state but 'failed'): of racing captures and voids exactly one is inserted.
CREATE TABLE hold_actions (
    id              uuid          PRIMARY KEY,
    seq             bigint        GENERATED ALWAYS AS IDENTITY,
    session_id      uuid          NOT NULL REFERENCES payment_sessions (id) ON DELETE CASCADE,
    kind            text          NOT NULL CHECK (kind IN ('capture', 'void')),
    amount          numeric(19,4) NOT NULL CHECK (amount > 0),
    state           text          NOT NULL
        CHECK (state IN ('sent', 'succeeded', 'failed', 'unknown')),
    -- What the processor holds captured after a capture it confirmed.
    captured_amount numeric(19,4) CHECK (captured_amount IS NULL OR captured_amount > 0),
    svc_code        text          CHECK (svc_code ~ '^SVC_[0-9]{3}$'),
    idempotency_key text,
    next_check_at   timestamptz,
    created_at      timestamptz   NOT NULL,
    updated_at      timestamptz   NOT NULL
);
CREATE UNIQUE INDEX hold_actions_holding ON hold_actions (session_id)
    WHERE state IN ('sent', 'unknown', 'succeeded');
CREATE UNIQUE INDEX hold_actions_key ON hold_actions (session_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
CREATE INDEX hold_actions_session ON hold_actions (session_id, created_at, seq);
CREATE INDEX hold_actions_due ON hold_actions (next_check_at)
    WHERE state IN ('sent', 'unknown') AND next_check_at IS NOT NULL;

-- Held authorisations: a terminal's payments are captured with their authorisation
-- ('automatic', the spec's behaviour) or held for the merchant to capture or void ('manual').
-- An attempt keeps the method it was sent with, so that every replay is the same request.
ALTER TABLE terminals ADD COLUMN capture_method text NOT NULL DEFAULT 'automatic'
    CHECK (capture_method IN ('automatic', 'manual'));
ALTER TABLE payment_attempts ADD COLUMN capture_method text NOT NULL DEFAULT 'automatic'
    CHECK (capture_method IN ('automatic', 'manual'));
