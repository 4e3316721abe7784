-- The card-testing guard's sweep: a decline after a 3DS challenge finds the session's answer
-- recorded as not declined (CardGuard::record_late_decline) by this index. Additive: the
-- previous release does not need it.
CREATE INDEX card_guard_answers_session_answered ON card_guard_answers (session_id)
    WHERE NOT declined;
