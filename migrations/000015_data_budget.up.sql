-- The data budget (issue 10, item 8): bytes that callers who aren't signed in
-- store per UTC day, counted in one row per day that every replica shares.
-- Rows older than a month are deleted by the first write of each day.
CREATE TABLE data_budget_days (
    day   date PRIMARY KEY,
    bytes bigint NOT NULL CHECK (bytes >= 0)
);

-- Posted readings' per-address and per-owner daily caps: who posted each.
ALTER TABLE exploration_readings
    ADD COLUMN address text NOT NULL DEFAULT '',
    ADD COLUMN owner   text NOT NULL DEFAULT '';
CREATE INDEX exploration_readings_new_address ON exploration_readings (address, posted_at) WHERE is_new;
CREATE INDEX exploration_readings_new_owner ON exploration_readings (owner, posted_at) WHERE is_new;
