DROP TRIGGER payment_disputes_events ON payment_disputes;
DROP FUNCTION record_dispute_event();
DROP TRIGGER payment_refunds_failed ON payment_refunds;
DROP FUNCTION record_refund_failed();
DROP FUNCTION record_subject_event(uuid, text, timestamptz, uuid, text, text);
CREATE OR REPLACE FUNCTION session_change_event_type(
    old_state smallint, new_state smallint, old_refunded numeric, new_refunded numeric
) RETURNS text
    LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE
        WHEN old_state = 3 AND new_state = 1 THEN 'payment.captured'
        WHEN old_state <> new_state THEN CASE new_state
            WHEN 1 THEN 'payment.succeeded'
            WHEN 2 THEN 'payment.failed'
            WHEN 3 THEN 'payment.authorized'
            WHEN 6 THEN 'payment.expired'
            WHEN 7 THEN 'payment.cancelled'
            WHEN 8 THEN 'payment.voided'
        END
        WHEN new_refunded > old_refunded THEN 'payment.refunded'
    END
$$;
DELETE FROM hold_actions WHERE kind = 'expiry';
ALTER TABLE hold_actions DROP CONSTRAINT hold_actions_kind_check;
ALTER TABLE hold_actions ADD CONSTRAINT hold_actions_kind_check
    CHECK (kind IN ('capture', 'void'));
ALTER TABLE events DROP COLUMN dispute_status;
ALTER TABLE events DROP COLUMN dispute_reference;
ALTER TABLE events DROP COLUMN refund_id;
DROP TABLE payment_disputes;
DROP INDEX payment_refunds_processor_reference;
DROP INDEX payment_attempts_processor_reference;
DROP TABLE processor_notices;
