-- Flowers published to NEAR (flower/v1, docs/publishing.md): each kept once
-- by its id (the SHA-256 of the record's canonical JSON), with the record's
-- bytes exactly as SocialDB holds them. A NOTIFY on channel petal_flowers
-- (payload "<id> <map>") tells every replica when one is newly kept.
CREATE TABLE published_flowers (
    id              text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
    network         text NOT NULL CHECK (network IN ('near:mainnet', 'near:testnet')),
    maker           text NOT NULL CHECK (length(maker) BETWEEN 2 AND 64),
    map             text NOT NULL CHECK (length(map) BETWEEN 1 AND 200),
    snapshot_sha256 text NOT NULL CHECK (snapshot_sha256 ~ '^[0-9a-f]{64}$'),
    record          text NOT NULL CHECK (octet_length(record) <= 32768),
    name            text,
    made_at         timestamptz NOT NULL,
    published_at    timestamptz NOT NULL DEFAULT now(),
    status          text NOT NULL CHECK (status IN ('ok', 'snapshot_missing')),
    came            text NOT NULL CHECK (came IN ('prepared', 'record', 'synced'))
);
-- list_flowers: newest first, alone or by network, maker or map; the map's
-- lists by map and by snapshot.
CREATE INDEX published_flowers_newest ON published_flowers (published_at DESC, id DESC);
CREATE INDEX published_flowers_by_network ON published_flowers (network, published_at DESC, id DESC);
CREATE INDEX published_flowers_by_maker ON published_flowers (maker, published_at DESC, id DESC);
CREATE INDEX published_flowers_by_map ON published_flowers (map, published_at DESC, id DESC);
CREATE INDEX published_flowers_by_snapshot ON published_flowers (snapshot_sha256);

-- Records prepared here for an account to sign, until they expire: what
-- publish_flower compares the chain's bytes with.
CREATE TABLE publish_prepared (
    id         text NOT NULL CHECK (id ~ '^[0-9a-f]{64}$'),
    account    text NOT NULL CHECK (length(account) BETWEEN 2 AND 64),
    network    text NOT NULL CHECK (network IN ('near:mainnet', 'near:testnet')),
    record     text NOT NULL CHECK (octet_length(record) <= 32768),
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (id, account, network)
);
CREATE INDEX publish_prepared_expires_at ON publish_prepared (expires_at);
