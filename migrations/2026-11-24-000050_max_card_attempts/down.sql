ALTER TABLE terminals DROP COLUMN max_card_attempts;
