ALTER TABLE payment_sessions DROP COLUMN capture_method, DROP COLUMN metadata;
