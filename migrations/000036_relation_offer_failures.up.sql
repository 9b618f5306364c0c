-- Readings the relations index could not take (a block time that is not
-- RFC 3339, weights it cannot read, a snapshot not loadable just now): each
-- is tried again after a delay that doubles, up to a day, so a few readings
-- that never index can't hold back the catch-up job's batch. A row goes when
-- its reading is offered (relation_readings); there is one at most for each
-- published reading, so the table is bounded by published_flowers.
CREATE TABLE relation_offer_failures (
    group_id        text NOT NULL CHECK (length(group_id) BETWEEN 1 AND 200),
    snapshot_sha256 text NOT NULL CHECK (snapshot_sha256 ~ '^[0-9a-f]{64}$'),
    attempts        integer NOT NULL CHECK (attempts >= 1),
    next_at         timestamptz NOT NULL,
    last_error      text NOT NULL CHECK (length(last_error) <= 500),
    PRIMARY KEY (group_id, snapshot_sha256)
);
