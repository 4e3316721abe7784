-- The merchant's second day: capture, void, refunds, and their events.
--
-- New state 8 Voided (an authorisation released by the merchant). A merchant's capture moves
-- ApprovedTransaction (3) to Successful (1) and records the amount captured; refunds are rows
-- of their own whose confirmed amounts add up in payment_sessions.refunded_amount.

ALTER TABLE payment_sessions DROP CONSTRAINT payment_sessions_state_check;
ALTER TABLE payment_sessions ADD CONSTRAINT payment_sessions_state_check
    CHECK (state BETWEEN 0 AND 8);
-- The merchant's capture (NULL: none; a payment captured with its authorisation captured its
-- whole amount).
ALTER TABLE payment_sessions ADD COLUMN captured_amount numeric(19,4)
    CHECK (captured_amount IS NULL OR (captured_amount > 0 AND captured_amount <= amount));
-- The sum of the refunds the processor confirmed.
ALTER TABLE payment_sessions ADD COLUMN refunded_amount numeric(19,4) NOT NULL DEFAULT 0
    CHECK (refunded_amount >= 0);

-- One row per refund, written (state 'sent') with its amount reserved BEFORE the processor is
-- asked, under a lock of the session row; its id is the processor idempotency key. 'failed':
-- the processor said nothing was refunded; 'unknown': its answer was lost (the amount stays
-- reserved and is not counted as refunded).
CREATE TABLE payment_refunds (
    id                  uuid          PRIMARY KEY,
    seq                 bigint        GENERATED ALWAYS AS IDENTITY,
    session_id          uuid          NOT NULL REFERENCES payment_sessions (id) ON DELETE CASCADE,
    amount              numeric(19,4) NOT NULL CHECK (amount > 0),
    state               text          NOT NULL
        CHECK (state IN ('sent', 'succeeded', 'failed', 'unknown')),
    processor_reference text,
    svc_code            text          CHECK (svc_code ~ '^SVC_[0-9]{3}$'),
    created_at          timestamptz   NOT NULL,
    updated_at          timestamptz   NOT NULL
);
CREATE INDEX payment_refunds_session ON payment_refunds (session_id, created_at, seq);

-- Events keep the amounts as of the event, so that an event's body never changes.
ALTER TABLE events DROP CONSTRAINT events_state_check;
ALTER TABLE events ADD CONSTRAINT events_state_check CHECK (state BETWEEN 0 AND 8);
ALTER TABLE events ADD COLUMN captured_amount numeric(19,4);
ALTER TABLE events ADD COLUMN refunded_amount numeric(19,4) NOT NULL DEFAULT 0;

-- The event type of a change (EventType::of_change, and payment.refunded for a refunded
-- amount that grew): NULL for changes merchants are not told about.
CREATE FUNCTION session_change_event_type(
    old_state smallint, new_state smallint, old_refunded numeric, new_refunded numeric
) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN old_state = 3 AND new_state = 1 THEN 'payment.captured'
        WHEN old_state <> new_state THEN CASE new_state
            WHEN 1 THEN 'payment.succeeded'
            WHEN 2 THEN 'payment.failed'
            WHEN 3 THEN 'payment.authorized'
            WHEN 6 THEN 'payment.expired'
            WHEN 7 THEN 'payment.cancelled'
            WHEN 8 THEN 'payment.voided'
        END
        WHEN new_refunded > old_refunded THEN 'payment.refunded'
    END
$$;

CREATE OR REPLACE FUNCTION record_session_event() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    event_type text := session_change_event_type(
        OLD.state, NEW.state, OLD.refunded_amount, NEW.refunded_amount);
BEGIN
    IF event_type IS NOT NULL THEN
        INSERT INTO events (terminal_number, session_id, type, state, occurred_at,
                            captured_amount, refunded_amount)
        VALUES (NEW.terminal_number, NEW.id, event_type, NEW.state, NEW.updated_at,
                NEW.captured_amount, NEW.refunded_amount);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER payment_sessions_events ON payment_sessions;
CREATE TRIGGER payment_sessions_events
    AFTER UPDATE OF state, refunded_amount ON payment_sessions
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state
                       OR OLD.refunded_amount IS DISTINCT FROM NEW.refunded_amount)
    EXECUTE FUNCTION record_session_event();
DROP FUNCTION session_event_type(smallint);
