-- Snapshots, named by the SHA-256 of their canonical JSON. The body is the
-- canonical bytes gzipped once at write time and served as they are.
CREATE TABLE snapshots (
    sha256        text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    network       text NOT NULL,
    target_key    text NOT NULL,
    block_height  bigint NOT NULL CHECK (block_height >= 0),
    block_hash    text NOT NULL,
    block_time    timestamptz NOT NULL,
    origin        text NOT NULL CHECK (origin IN ('this_site', 'their_machine')),
    account_count integer NOT NULL CHECK (account_count >= 0),
    title         text NOT NULL,
    about         text NOT NULL,
    body_gzip     bytea NOT NULL,
    stored_at     timestamptz NOT NULL DEFAULT now()
);
-- get_snapshot answers from the newest reading of a target.
CREATE INDEX snapshots_target_newest ON snapshots (target_key, block_height DESC, stored_at DESC);
