-- Corrections of published flowers (correction/v1, docs/publishing.md,
-- "Corrections"): each kept once by its id (the SHA-256 of the record's
-- canonical JSON), with the record's bytes exactly as SocialDB holds them.
-- A correction names a flower this site holds; it never changes the flower.
-- Kept as long as the flower is: both are public records on the chain.
CREATE TABLE flower_corrections (
    id        text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
    flower_id text NOT NULL REFERENCES published_flowers (id) ON DELETE CASCADE,
    network   text NOT NULL CHECK (network IN ('near:mainnet', 'near:testnet')),
    maker     text NOT NULL CHECK (length(maker) BETWEEN 2 AND 64),
    kind      text NOT NULL CHECK (kind IN ('stale_reading', 'misleading_label', 'misassigned_group', 'other')),
    record    text NOT NULL CHECK (octet_length(record) <= 16384),
    made_at   timestamptz NOT NULL,
    kept_at   timestamptz NOT NULL DEFAULT now(),
    came      text NOT NULL CHECK (came IN ('submitted', 'synced'))
);
-- A flower's corrections, newest first (get_flower, the map's page).
CREATE INDEX flower_corrections_by_flower ON flower_corrections (flower_id, kept_at DESC, id DESC);
