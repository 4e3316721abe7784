DROP TRIGGER events_webhook_deliveries ON events;
DROP FUNCTION queue_event_deliveries();
DROP TABLE webhook_delivery_attempts;
DROP TABLE webhook_deliveries;
DROP TABLE webhook_endpoints;
