-- Merchant events: a transactional outbox. Every change of a session into a state a merchant
-- is told about writes one event row in the same transaction as the change itself (a trigger,
-- so that no code path, bulk expiry included, can change a state without its event).

CREATE TABLE events (
    id              uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    -- Insertion order within a transaction.
    seq             bigint      GENERATED ALWAYS AS IDENTITY,
    -- The writing transaction: readers list only events of transactions older than every
    -- transaction still running (pg_snapshot_xmin), ordered by (txid, seq), so a cursor never
    -- skips an event that commits late.
    txid            xid8        NOT NULL DEFAULT pg_current_xact_id(),
    terminal_number text        NOT NULL,
    session_id      uuid        NOT NULL REFERENCES payment_sessions (id) ON DELETE CASCADE,
    -- EventType::as_str: payment.succeeded, payment.failed, payment.authorized,
    -- payment.expired, payment.cancelled.
    type            text        NOT NULL,
    -- The session's state and last change as of the event (the rest of the status record
    -- does not change after creation).
    state           smallint    NOT NULL CHECK (state BETWEEN 0 AND 7),
    occurred_at     timestamptz NOT NULL
);
CREATE INDEX events_feed ON events (terminal_number, txid, seq);
CREATE INDEX events_session ON events (session_id);

-- The event type of a state code (EventType::of_state): NULL for states merchants are not
-- told about (Pending 0, Processing 4, ChallengeRequired 5).
CREATE FUNCTION session_event_type(state smallint) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE state
        WHEN 1 THEN 'payment.succeeded'
        WHEN 2 THEN 'payment.failed'
        WHEN 3 THEN 'payment.authorized'
        WHEN 6 THEN 'payment.expired'
        WHEN 7 THEN 'payment.cancelled'
    END
$$;

CREATE FUNCTION record_session_event() RETURNS trigger
    LANGUAGE plpgsql AS $$
DECLARE
    event_type text := session_event_type(NEW.state);
BEGIN
    IF event_type IS NOT NULL THEN
        INSERT INTO events (terminal_number, session_id, type, state, occurred_at)
        VALUES (NEW.terminal_number, NEW.id, event_type, NEW.state, NEW.updated_at);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER payment_sessions_events
    AFTER UPDATE OF state ON payment_sessions
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state)
    EXECUTE FUNCTION record_session_event();
