-- How many cards may be declined on one session of the terminal before it is Failed
-- (`maxCardAttempts`). 1 is the spec's behaviour (7.4.4): the first decline is Failed.
ALTER TABLE terminals
    ADD COLUMN max_card_attempts smallint NOT NULL DEFAULT 1
    CHECK (max_card_attempts BETWEEN 1 AND 10);
