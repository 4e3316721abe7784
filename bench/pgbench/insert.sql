-- pgbench INSERT: one payment_sessions row per transaction (autocommit: one commit, one WAL
-- flush), with every column the service writes for an integrated checkout session. The id,
-- merchant reference and internal reference are unique per transaction (a fresh random UUID),
-- so every insert passes the primary key, the partial unique index on
-- (terminal_number, merchant_reference) and the unique internal reference.
INSERT INTO payment_sessions (id, terminal_number, merchant_reference, internal_reference, kind,
    callback_success_url, callback_fail_url, callback_back_url, amount, currency, description,
    state, expires_at, created_at, updated_at)
SELECT u, 'BENCH-001', 'PGB-' || u::text, 'INT-' || u::text, 'checkout',
    'https://merchant.example/ok', 'https://merchant.example/fail',
    'https://merchant.example/cart', 25.50, 'USD', 'Order ' || u::text,
    0, now() + interval '1 hour', now(), now()
FROM gen_random_uuid() AS u;
