-- Run by bench/run.sh with psql in the pgbench database, after the migrations' up.sql:
-- the terminal the rows belong to, and :rows sessions for the SELECT run whose ids pgbench
-- can compute (md5(k)::uuid for k in 1..:rows).
INSERT INTO terminals (number, display_name) VALUES ('BENCH-001', 'pgbench');

INSERT INTO payment_sessions (id, terminal_number, merchant_reference, internal_reference, kind,
    callback_success_url, callback_fail_url, callback_back_url, amount, currency, description,
    state, expires_at, created_at, updated_at)
SELECT md5(k::text)::uuid, 'BENCH-001', 'PRE-' || k, 'INT-' || md5(k::text), 'checkout',
    'https://merchant.example/ok', 'https://merchant.example/fail',
    'https://merchant.example/cart', 25.50, 'USD', 'Order PRE-' || k,
    0, now() + interval '1 hour', now(), now()
FROM generate_series(1, :rows) AS k;

VACUUM ANALYZE;
