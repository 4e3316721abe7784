CREATE OR REPLACE FUNCTION queue_event_deliveries() RETURNS trigger
    LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_deliveries (endpoint_id, event_id)
    SELECT id, NEW.id FROM webhook_endpoints
    WHERE terminal_number = NEW.terminal_number
      AND deleted_at IS NULL
      AND (events IS NULL OR NEW.type = ANY (events));
    RETURN NULL;
END
$$;
DROP TABLE webhook_redeliveries;
DROP INDEX webhook_deliveries_leased;
DROP INDEX webhook_deliveries_due_by_endpoint;
DROP INDEX webhook_deliveries_log;
ALTER TABLE webhook_deliveries DROP COLUMN seq;
ALTER TABLE webhook_endpoints
    DROP CONSTRAINT webhook_endpoints_disabled_with_reason,
    DROP COLUMN last_claimed_at,
    DROP COLUMN disabled_reason,
    DROP COLUMN disabled_at,
    DROP COLUMN circuit_openings,
    DROP COLUMN circuit_open_until,
    DROP COLUMN failing_since,
    DROP COLUMN consecutive_failures;
