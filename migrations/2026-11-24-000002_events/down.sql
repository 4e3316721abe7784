DROP TRIGGER payment_sessions_events ON payment_sessions;
DROP FUNCTION record_session_event();
DROP FUNCTION session_event_type(smallint);
DROP TABLE events;
