DROP INDEX payment_attempts_held;
