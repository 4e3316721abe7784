-- pgbench SELECT: one whole payment_sessions row by primary key, among the :rows rows that
-- prepare.sql filled in (pgbench -D rows=N).
\set k random(1, :rows)
SELECT * FROM payment_sessions WHERE id = md5(:k::text)::uuid;
