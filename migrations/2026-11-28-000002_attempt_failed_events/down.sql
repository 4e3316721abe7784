DROP TRIGGER payment_attempts_declined ON payment_attempts;
DROP FUNCTION record_attempt_failed();
