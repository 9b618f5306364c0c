-- One lease row per scheduled job (app.Scheduler), shared by every replica:
-- when it is next due, and which process runs it until when. A job runs on
-- one replica at a time because only one can hold the row's lease; a
-- replica that dies mid-run loses it when lease_until passes.
CREATE TABLE scheduled_jobs (
    name         text PRIMARY KEY,
    next_at      timestamptz NOT NULL DEFAULT now(),
    holder       text,        -- the process running it, NULL when idle
    lease_until  timestamptz,
    started_at   timestamptz,
    finished_at  timestamptz,
    last_outcome text CHECK (last_outcome IN ('ok', 'failed', 'overran')),
    last_items   bigint NOT NULL DEFAULT 0,
    last_error   text NOT NULL DEFAULT '',
    runs         bigint NOT NULL DEFAULT 0,
    CHECK ((holder IS NULL) = (lease_until IS NULL))
);
