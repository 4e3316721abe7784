DROP FUNCTION set_card_guard_alert(text, boolean, uuid, timestamptz);
DROP TABLE card_guard_alerts;
DROP TABLE card_guard_proofs;
DROP TABLE card_guard_answers;
