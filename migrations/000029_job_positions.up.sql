-- Where a scheduled job that walks something long stopped, by job and part,
-- so its next run, on any replica, goes on from there: the map's SocialDB
-- sync keeps the index of the next account page per network (docs/map.md).
-- One row per job and part: nothing to retain.
CREATE TABLE job_positions (
    job        text NOT NULL CHECK (length(job) BETWEEN 1 AND 100),
    part       text NOT NULL CHECK (length(part) BETWEEN 1 AND 100),
    position   bigint NOT NULL CHECK (position >= 0),
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (job, part)
);
