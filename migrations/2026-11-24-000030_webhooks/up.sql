-- Merchant webhooks: endpoints per terminal, one delivery per (endpoint, event) written in the
-- same transaction as the event (a trigger on `events`, so that no event misses an endpoint
-- that existed when it was written), and a log of every attempt.

CREATE TABLE webhook_endpoints (
    id                     uuid        PRIMARY KEY,
    terminal_number        text        NOT NULL REFERENCES terminals (number),
    url                    text        NOT NULL,
    -- The event types sent; NULL: every type.
    events                 text[],
    -- The signing secret, sealed (AES-256-GCM, the endpoint id as context): never in clear.
    secret                 bytea       NOT NULL,
    -- The secret before the last rotation, still signing until `previous_secret_until`.
    previous_secret        bytea,
    previous_secret_until  timestamptz,
    created_at             timestamptz NOT NULL,
    -- Deleted endpoints are kept for their delivery log; they get nothing more.
    deleted_at             timestamptz
);
CREATE INDEX webhook_endpoints_terminal ON webhook_endpoints (terminal_number)
    WHERE deleted_at IS NULL;

CREATE TABLE webhook_deliveries (
    id               uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
    endpoint_id      uuid        NOT NULL REFERENCES webhook_endpoints (id),
    event_id         uuid        NOT NULL REFERENCES events (id) ON DELETE CASCADE,
    -- pending, delivered, failed (the schedule ran out), cancelled (the endpoint was deleted).
    state            text        NOT NULL DEFAULT 'pending'
                     CHECK (state IN ('pending', 'delivered', 'failed', 'cancelled')),
    -- Attempts made so far.
    attempts         integer     NOT NULL DEFAULT 0,
    next_attempt_at  timestamptz NOT NULL DEFAULT now(),
    -- The worker holding the delivery, until when: a claim is a lease, so that a worker
    -- killed mid-attempt only delays the delivery.
    claim            uuid,
    claimed_until    timestamptz,
    -- True for a delivery asked for by POST /pay/api/events/{id}/redeliver.
    redelivery       boolean     NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    finished_at      timestamptz
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at)
    WHERE state = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at);
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);

CREATE TABLE webhook_delivery_attempts (
    id               bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    delivery_id      uuid        NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
    attempted_at     timestamptz NOT NULL,
    duration_ms      integer     NOT NULL,
    -- The answer's HTTP status, or NULL with `error` when there was none.
    status           smallint,
    error            text,
    -- The first bytes of the answer.
    response_excerpt text
);
CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, id);

CREATE FUNCTION queue_event_deliveries() RETURNS trigger
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

CREATE TRIGGER events_webhook_deliveries
    AFTER INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION queue_event_deliveries();
