-- The NEAR price as read every ten minutes (issue 10, item 3), so a top-up is
-- priced at its transaction's block time, not when it is claimed. Kept
-- PETAL_NEAR_PRICE_KEEP_DAYS days (the reading job prunes older ones).
CREATE TABLE near_prices (
    id         bigserial PRIMARY KEY,
    read_at    timestamptz NOT NULL,
    usd_micros bigint NOT NULL CHECK (usd_micros > 0),
    source     text NOT NULL CHECK (source <> '')
);
CREATE INDEX near_prices_read_at ON near_prices (read_at);

-- Which price each top-up was counted at: the transfer's block time and the
-- reading's time and source. Top-ups from before were priced when claimed.
ALTER TABLE credit_topups
    ADD COLUMN block_at     timestamptz,
    ADD COLUMN price_at     timestamptz,
    ADD COLUMN price_source text;
