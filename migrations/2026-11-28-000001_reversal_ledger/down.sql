ALTER TABLE payment_attempts DROP COLUMN capture_method;
ALTER TABLE terminals DROP COLUMN capture_method;
DROP TABLE hold_actions;
DROP INDEX payment_refunds_due;
DROP INDEX payment_refunds_key;
ALTER TABLE payment_refunds DROP COLUMN next_check_at;
ALTER TABLE payment_refunds DROP COLUMN idempotency_key;
