-- The lookup by merchant reference (GET /pay/api/payment?transactionReferenceNumber=...)
-- lists a terminal's sessions with one reference in every state, newest first. The unique
-- index payment_sessions_reference_held leaves Expired sessions out, so it cannot serve it.
CREATE INDEX payment_sessions_reference
    ON payment_sessions (terminal_number, merchant_reference, created_at DESC, id DESC);
