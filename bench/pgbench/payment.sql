-- pgbench card payment: the statements of one card payment through the hosted page, one
-- pgbench client per payer, each statement single-row and in autocommit (three commits and
-- three WAL flushes a payment, as without write combining). The same rows and the same
-- triggers as the service: the session created, the checkout page's read (the session with
-- its terminal, its items and charges), the card post's read, the attempt begun (Pending to
-- Processing, the attempt inserted in the same statement) and its answer recorded (the
-- attempt saved, Processing to Successful, which fires the events trigger and the webhook
-- deliveries' one). What the card processor does is not in it: this is PostgreSQL's own
-- ceiling for a payment's work, as insert.sql is for a create's.
INSERT INTO payment_sessions (id, terminal_number, merchant_reference, internal_reference, kind,
    callback_success_url, callback_fail_url, callback_back_url, amount, currency, description,
    state, expires_at, created_at, updated_at)
SELECT u, 'BENCH-001', 'PAY-' || u::text, 'INT-' || u::text, 'checkout',
    'https://merchant.example/ok', 'https://merchant.example/fail',
    'https://merchant.example/cart', 25.50, 'USD', 'Order ' || u::text,
    0, now() + interval '1 hour', now(), now()
FROM gen_random_uuid() AS u
RETURNING id AS sid
\gset
SELECT * FROM payment_sessions s LEFT JOIN terminals t ON t.number = s.terminal_number
WHERE s.id = :sid;
SELECT * FROM session_items WHERE session_id = :sid ORDER BY position;
SELECT * FROM session_charges WHERE session_id = :sid ORDER BY position;
SELECT * FROM payment_sessions s LEFT JOIN terminals t ON t.number = s.terminal_number
WHERE s.id = :sid;
WITH a AS (SELECT gen_random_uuid() AS id),
     moved AS (UPDATE payment_sessions s SET state = 4, updated_at = now(),
               current_attempt_id = a.id FROM a
               WHERE s.id = :sid AND s.state = 0 RETURNING a.id, s.id AS session_id)
INSERT INTO payment_attempts (id, session_id, card_brand, card_last4, processor_reference,
    challenge_url, state, svc_code, payment_method, return_url, checks, next_check_at,
    created_at, updated_at)
SELECT id, session_id, 'visa', '4242', NULL, NULL, 'sent', NULL, 'pm_pgbench',
    'https://checkout.example/pay/return', 0, now() + interval '1 minute', now(), now()
FROM moved
RETURNING id AS aid
\gset
WITH saved AS (UPDATE payment_attempts a SET state = 'succeeded',
               processor_reference = 'ref_' || a.id::text, next_check_at = NULL,
               updated_at = now()
               WHERE a.id = :aid AND a.session_id = :sid AND a.state = 'sent'
               RETURNING a.id, a.session_id)
UPDATE payment_sessions s SET state = 1, updated_at = now() FROM saved
WHERE s.id = saved.session_id AND s.state = 4 AND s.current_attempt_id = saved.id;
