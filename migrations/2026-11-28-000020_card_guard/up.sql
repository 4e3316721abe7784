-- The card-testing guard's shared counts (CardGuard): every instance reads and writes the
-- same rows, so an attacker gains nothing from the number of instances. Additive: the
-- previous release never reads these tables.

-- One row per processor answer to a card post: keyed hashes only (HMAC-SHA256 under the
-- service's guard secret), never a card number or an address.
CREATE TABLE card_guard_answers (
    id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    terminal_number text        NOT NULL,
    session_id      uuid        NOT NULL,
    address_key     text        CHECK (address_key ~ '^[0-9a-f]{64}$'),
    card_key        text        CHECK (card_key ~ '^[0-9a-f]{64}$'),
    declined        boolean     NOT NULL,
    answered_at     timestamptz NOT NULL
);
CREATE INDEX card_guard_answers_session ON card_guard_answers (session_id) WHERE declined;
CREATE INDEX card_guard_answers_address ON card_guard_answers (address_key, answered_at)
    WHERE declined AND address_key IS NOT NULL;
CREATE INDEX card_guard_answers_card ON card_guard_answers (card_key, answered_at)
    WHERE declined AND card_key IS NOT NULL;
CREATE INDEX card_guard_answers_terminal ON card_guard_answers (terminal_number, answered_at);
CREATE INDEX card_guard_answers_terminal_declines ON card_guard_answers (terminal_number, answered_at)
    WHERE declined;
CREATE INDEX card_guard_answers_age ON card_guard_answers (answered_at);

-- Proofs of work spent: each challenge (by its signature) passes once.
CREATE TABLE card_guard_proofs (
    id         text        PRIMARY KEY CHECK (length(id) BETWEEN 1 AND 128),
    expires_at timestamptz NOT NULL
);
CREATE INDEX card_guard_proofs_expiry ON card_guard_proofs (expires_at);

-- Terminals flagged as under card testing, since their terminal.card_testing_suspected.
CREATE TABLE card_guard_alerts (
    terminal_number text        PRIMARY KEY,
    since           timestamptz NOT NULL
);

-- Raises or lowers a terminal's flag; only a change writes its event, about `of_session`, in
-- the same transaction (of racing calls one changes the row). Returns whether it changed.
CREATE FUNCTION set_card_guard_alert(
    of_terminal text, raise boolean, of_session uuid, event_at timestamptz
) RETURNS boolean
    LANGUAGE plpgsql AS $$
DECLARE
    changed integer;
BEGIN
    IF raise THEN
        INSERT INTO card_guard_alerts (terminal_number, since) VALUES (of_terminal, event_at)
            ON CONFLICT DO NOTHING;
    ELSE
        DELETE FROM card_guard_alerts WHERE terminal_number = of_terminal;
    END IF;
    GET DIAGNOSTICS changed = ROW_COUNT;
    IF changed = 0 THEN
        RETURN false;
    END IF;
    PERFORM record_subject_event(of_session,
        CASE WHEN raise THEN 'terminal.card_testing_suspected'
             ELSE 'terminal.card_testing_ended' END,
        event_at, NULL, NULL, NULL);
    RETURN true;
END
$$;
