-- A session's state changes (Pending -> Processing -> Successful, ...) are heap-only (HOT)
-- updates where they can be: PostgreSQL then writes no index entry for the new row version.
-- An update is HOT only when no column that an index reads (its keys or its WHERE) changes,
-- and the new version fits on the same page. `state` was read by the WHERE of three partial
-- indexes, so every state change wrote an entry into each of the table's indexes (four per
-- change, eight per card payment).
--
-- The three indexes now read stored generated columns that change only when the session
-- enters or leaves the set the index is for, and the table leaves room on each page for the
-- new versions. A card payment's answer (Processing -> Successful) is a HOT update; its
-- start (Pending -> Processing) is not, since the session leaves the expiry sweep's set.
--
-- Adding the columns rewrites the table under an exclusive lock (a long one on a large
-- table: run it in a maintenance window there).

ALTER TABLE payment_sessions
    -- The merchant reference while the session holds it (every state but Expired,
    -- SessionState::holds_reference), NULL after.
    ADD COLUMN held_reference text
        GENERATED ALWAYS AS (CASE WHEN state <> 6 THEN merchant_reference END) STORED,
    -- expires_at while Pending (the expiry sweep), NULL otherwise.
    ADD COLUMN pending_until timestamptz
        GENERATED ALWAYS AS (CASE WHEN state = 0 THEN expires_at END) STORED,
    -- expires_at while ChallengeRequired (the challenge sweep), NULL otherwise.
    ADD COLUMN challenge_until timestamptz
        GENERATED ALWAYS AS (CASE WHEN state = 5 THEN expires_at END) STORED;

-- A merchant reference is unique per terminal among the sessions that hold it. Racing inserts
-- cannot both win.
CREATE UNIQUE INDEX payment_sessions_held_reference
    ON payment_sessions (terminal_number, held_reference) WHERE held_reference IS NOT NULL;
CREATE INDEX payment_sessions_pending_until
    ON payment_sessions (pending_until) WHERE pending_until IS NOT NULL;
CREATE INDEX payment_sessions_challenge_until
    ON payment_sessions (challenge_until) WHERE challenge_until IS NOT NULL;

DROP INDEX payment_sessions_reference_held;
DROP INDEX payment_sessions_pending_expiry;
DROP INDEX payment_sessions_challenge_expiry;

-- Room on each page for its sessions' later versions: inserts fill a page to 70 % (about 20
-- sessions of about 260 bytes), and a session's next versions go into the rest.
ALTER TABLE payment_sessions SET (fillfactor = 70);
