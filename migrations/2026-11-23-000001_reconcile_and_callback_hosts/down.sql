ALTER TABLE terminals DROP COLUMN callback_hosts;
DROP INDEX payment_sessions_processing;
