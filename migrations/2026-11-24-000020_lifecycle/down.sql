DROP TRIGGER payment_sessions_events ON payment_sessions;
CREATE OR REPLACE FUNCTION session_event_type(state smallint) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE state
        WHEN 1 THEN 'payment.succeeded'
        WHEN 2 THEN 'payment.failed'
        WHEN 3 THEN 'payment.authorized'
        WHEN 6 THEN 'payment.expired'
        WHEN 7 THEN 'payment.cancelled'
    END
$$;
CREATE OR REPLACE FUNCTION record_session_event() RETURNS trigger
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
DROP FUNCTION session_change_event_type(smallint, smallint, numeric, numeric);
ALTER TABLE events DROP COLUMN refunded_amount;
ALTER TABLE events DROP COLUMN captured_amount;
DROP TABLE payment_refunds;
ALTER TABLE payment_sessions DROP COLUMN refunded_amount;
ALTER TABLE payment_sessions DROP COLUMN captured_amount;
