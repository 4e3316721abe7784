-- Every declined card attempt is announced (payment.attempt_failed), whether or not the
-- session stays payable: in the same transaction as the attempt's answer, with the session as
-- that statement left it (an AFTER trigger runs once the statement, and so the session's own
-- move, is done).
CREATE FUNCTION record_attempt_failed() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO events (terminal_number, session_id, type, state, occurred_at,
                        captured_amount, refunded_amount)
    SELECT s.terminal_number, s.id, 'payment.attempt_failed', s.state, NEW.updated_at,
           s.captured_amount, s.refunded_amount
    FROM payment_sessions s WHERE s.id = NEW.session_id;
    RETURN NULL;
END
$$;

CREATE TRIGGER payment_attempts_declined
    AFTER UPDATE OF state ON payment_attempts
    FOR EACH ROW WHEN (NEW.state = 'declined' AND OLD.state IS DISTINCT FROM 'declined')
    EXECUTE FUNCTION record_attempt_failed();
