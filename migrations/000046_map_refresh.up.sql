-- The map_refresh job (docs/map.md, "A map that keeps itself fresh"): the
-- maps people look at, the readings the job keeps of them, each target's
-- state and each day's reads, in the database so every replica shares them.

-- Looks at each map (its page, GET /api/v1/maps/:id), counted only while
-- the job is on: what it reads first. One row per map.
CREATE TABLE map_views (
    map         text PRIMARY KEY CHECK (length(map) BETWEEN 1 AND 200),
    views       bigint NOT NULL DEFAULT 0 CHECK (views >= 0),
    last_viewed timestamptz NOT NULL
);

-- Readings the job made of a map: kept as readings of it (history), never
-- drawings, which stay people's. The snapshot itself is in snapshots.
CREATE TABLE map_readings (
    map             text NOT NULL CHECK (length(map) BETWEEN 1 AND 200),
    snapshot_sha256 text NOT NULL CHECK (snapshot_sha256 ~ '^[0-9a-f]{64}$'),
    kept_at         timestamptz NOT NULL,
    PRIMARY KEY (map, snapshot_sha256)
);
CREATE INDEX map_readings_kept_at ON map_readings (kept_at DESC);

-- Each target (a map's reader and params, by target key) between runs:
-- what the cheap check saw at its last reading, and its back-off.
CREATE TABLE map_refresh_targets (
    target_key text PRIMARY KEY CHECK (length(target_key) BETWEEN 1 AND 600),
    map        text NOT NULL CHECK (length(map) BETWEEN 1 AND 200),
    mark       text NOT NULL DEFAULT '' CHECK (length(mark) <= 200),
    failures   integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    next_try   timestamptz NOT NULL,
    last_error text NOT NULL DEFAULT '' CHECK (length(last_error) <= 500),
    updated_at timestamptz NOT NULL
);

-- Reads spent each UTC day, against PETAL_MAP_REFRESH_PER_DAY.
CREATE TABLE map_refresh_days (
    day   date PRIMARY KEY,
    reads integer NOT NULL CHECK (reads >= 0)
);
