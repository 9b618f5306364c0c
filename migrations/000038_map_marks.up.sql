-- The maps' marks (board #85, docs/map.md): what tells a map's organisation
-- from another, read by the map_marks job from the chain and the curated
-- list shipped in petal. One row per map id that was ever on the map (so the
-- table is bounded by the maps); a row without a mark was tried and never
-- read. A logo is a picture kept in media and served at /api/v1/media/…;
-- retention deletes a picture only when neither a profile nor a mark shows
-- it.
CREATE TABLE map_marks (
    map_id      text PRIMARY KEY CHECK (length(map_id) BETWEEN 1 AND 300),
    mark        text CHECK (octet_length(mark) <= 4096),
    logo_sha256 text REFERENCES media (sha256),
    read_at     timestamptz,
    changed_at  timestamptz,
    next_at     timestamptz NOT NULL,
    failures    integer NOT NULL DEFAULT 0 CHECK (failures >= 0),
    last_error  text CHECK (length(last_error) <= 500),
    CHECK (logo_sha256 IS NULL OR mark IS NOT NULL)
);
CREATE INDEX map_marks_next_at ON map_marks (next_at);
CREATE INDEX map_marks_logo ON map_marks (logo_sha256) WHERE logo_sha256 IS NOT NULL;
