-- Each serving process holds a lease: a row it heartbeats. A process whose lease
-- has lapsed is gone, and what it held (runs, ledger holds) can be released.
CREATE TABLE processes (
    id           text PRIMARY KEY,
    hostname     text NOT NULL,
    pid          integer NOT NULL,
    build_id     text NOT NULL,
    started_at   timestamptz NOT NULL DEFAULT now(),
    heartbeat_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX processes_heartbeat_at ON processes (heartbeat_at);
