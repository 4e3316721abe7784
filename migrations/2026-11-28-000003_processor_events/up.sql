-- The processor's own news: the events absorbed (each once), the disputes it reports, the
-- refunds it fails after confirming them, and the authorisations it lets expire. Additive:
-- the previous release reads and writes every table it knew as before.

-- Each processor event id is absorbed once; kept so that a redelivery is a no-op.
CREATE TABLE processor_notices (
    id          text        PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 255),
    absorbed_at timestamptz NOT NULL
);

-- Rows are found by the references the processor's events carry.
CREATE INDEX payment_attempts_processor_reference ON payment_attempts (processor_reference)
    WHERE processor_reference IS NOT NULL;
CREATE INDEX payment_refunds_processor_reference ON payment_refunds (processor_reference)
    WHERE processor_reference IS NOT NULL;

-- Disputes (chargebacks) of captured sessions, as the processor last reported each; the
-- status moves only forward (DisputeStatus::can_become), decided by the adapter's guarded
-- UPDATE.
CREATE TABLE payment_disputes (
    reference  text          PRIMARY KEY CHECK (length(reference) BETWEEN 1 AND 255),
    seq        bigserial     NOT NULL,
    session_id uuid          NOT NULL REFERENCES payment_sessions (id),
    amount     numeric(19,4) NOT NULL CHECK (amount >= 0),
    reason     text          NOT NULL CHECK (length(reason) <= 100),
    status     text          NOT NULL CHECK (status IN
        ('needs_response', 'under_review', 'won', 'lost', 'inquiry_closed')),
    opened_at  timestamptz   NOT NULL,
    updated_at timestamptz   NOT NULL
);
CREATE INDEX payment_disputes_session ON payment_disputes (session_id, opened_at, seq);

-- An event may name the refund or dispute it is about.
ALTER TABLE events ADD COLUMN refund_id uuid;
ALTER TABLE events ADD COLUMN dispute_reference text;
ALTER TABLE events ADD COLUMN dispute_status text;

-- The processor's release of an authorisation never captured is a ledger row like the
-- merchant's capture and void.
ALTER TABLE hold_actions DROP CONSTRAINT hold_actions_kind_check;
ALTER TABLE hold_actions ADD CONSTRAINT hold_actions_kind_check
    CHECK (kind IN ('capture', 'void', 'expiry'));

-- ApprovedTransaction (3) → Expired (6) is the processor's release of the authorisation:
-- payment.authorization_expired (EventType::of_change).
CREATE OR REPLACE FUNCTION session_change_event_type(
    old_state smallint, new_state smallint, old_refunded numeric, new_refunded numeric
) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN old_state = 3 AND new_state = 1 THEN 'payment.captured'
        WHEN old_state = 3 AND new_state = 6 THEN 'payment.authorization_expired'
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

-- Writes event `event_type` of session `of_session` as it stands, naming a refund or a
-- dispute. (The parameters are named apart from every column of payment_sessions, which
-- would otherwise win inside the SELECT.)
CREATE FUNCTION record_subject_event(
    of_session uuid, event_type text, event_at timestamptz, event_refund uuid,
    event_dispute text, event_dispute_status text
) RETURNS void
    LANGUAGE sql AS $$
    INSERT INTO events (terminal_number, session_id, type, state, occurred_at,
                        captured_amount, refunded_amount,
                        refund_id, dispute_reference, dispute_status)
    SELECT s.terminal_number, s.id, event_type, s.state, event_at, s.captured_amount,
           s.refunded_amount, event_refund, event_dispute, event_dispute_status
    FROM payment_sessions s WHERE s.id = of_session
$$;

-- Every refund that ends failed is announced (payment.refund_failed), in the same
-- transaction, with the session as that transaction left it (the adapter takes a refund the
-- processor failed after confirming it out of the refunded amount first).
CREATE FUNCTION record_refund_failed() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    PERFORM record_subject_event(NEW.session_id, 'payment.refund_failed', NEW.updated_at,
                                 NEW.id, NULL, NULL);
    RETURN NULL;
END
$$;

CREATE TRIGGER payment_refunds_failed
    AFTER UPDATE OF state ON payment_refunds
    FOR EACH ROW WHEN (NEW.state = 'failed' AND OLD.state IS DISTINCT FROM 'failed')
    EXECUTE FUNCTION record_refund_failed();

-- A dispute is announced when it is first recorded (opened), and when it closes; one first
-- recorded closed is announced opened, then closed.
CREATE FUNCTION record_dispute_event() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    closed boolean := NEW.status IN ('won', 'lost', 'inquiry_closed');
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM record_subject_event(NEW.session_id, 'payment.dispute_opened', NEW.updated_at,
                                     NULL, NEW.reference, NEW.status);
    END IF;
    IF closed AND (TG_OP = 'INSERT'
                   OR OLD.status NOT IN ('won', 'lost', 'inquiry_closed')) THEN
        PERFORM record_subject_event(NEW.session_id, 'payment.dispute_closed', NEW.updated_at,
                                     NULL, NEW.reference, NEW.status);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER payment_disputes_events
    AFTER INSERT OR UPDATE OF status ON payment_disputes
    FOR EACH ROW EXECUTE FUNCTION record_dispute_event();
