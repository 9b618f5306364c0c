-- Shares of shared limits (adapters/postgres/limits_share.go): each live
-- replica counts a key in its own memory up to its share of the limit and
-- asks the database only for a key that needs more. UNLOGGED like
-- rate_limits: rows change every heartbeat, and a crash of PostgreSQL
-- forgets the windows they guard too.

-- A replica's lease: it may count locally while lease_until is ahead.
CREATE UNLOGGED TABLE rate_limit_replicas (
    id          text        PRIMARY KEY,
    lease_until timestamptz NOT NULL
);

-- What a replica may have counted locally in windows of one length (per_us,
-- microseconds): up to limit / share_of of every key's limit, in windows
-- that close by until (its windows of that length and its lease, so a dead
-- replica's calls still count until they would have closed).
CREATE UNLOGGED TABLE rate_limit_claims (
    replica  text        NOT NULL,
    per_us   bigint      NOT NULL,
    share_of integer     NOT NULL CHECK (share_of > 0),
    until    timestamptz NOT NULL,
    PRIMARY KEY (replica, per_us)
);

-- When a key needs more than a share, its window moves to rate_limits
-- counting every other claimant's share as taken; each such replica gives
-- back what it didn't use (and counts the key in the database from then on)
-- when it next sees its row here.
CREATE UNLOGGED TABLE rate_limit_reserved (
    key        text        NOT NULL,
    replica    text        NOT NULL,
    window_end timestamptz NOT NULL,
    reserved   integer     NOT NULL,
    PRIMARY KEY (replica, key)
);
CREATE INDEX rate_limit_reserved_key ON rate_limit_reserved (key);
