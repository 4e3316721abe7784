-- The merchant's metadata and the capture method a create asked for (issue 29 item 4, issue 34
-- item 3). Both nullable without a default: adding them rewrites nothing and takes the table's
-- lock only for an instant. NULL metadata is none; NULL capture_method is the terminal's.
ALTER TABLE payment_sessions
    ADD COLUMN metadata jsonb
        CHECK (metadata IS NULL OR jsonb_typeof(metadata) = 'object'),
    ADD COLUMN capture_method text
        CHECK (capture_method IS NULL OR capture_method IN ('automatic', 'manual'));
