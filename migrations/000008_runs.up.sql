-- A run is Petals' agent's job; its events are a log numbered 0, 1, 2 … across
-- all its chats. next_seq is the counter: appending locks the run's row, so
-- numbers come without gaps or duplicates and a rolled-back append gives its
-- numbers back.
CREATE TABLE runs (
    id         text PRIMARY KEY,
    owner      text,                 -- a session subject (prs_…, anon_…); NULL: open to whoever holds the id
    status     text NOT NULL CHECK (status IN ('running', 'done', 'failed', 'stopped', 'interrupted')),
    model      text NOT NULL,
    process_id text,                 -- the process whose job holds it while running
    thread     json NOT NULL DEFAULT '[]',
    draft      json,
    flower     json,                 -- the last flower event's data
    next_seq   bigint NOT NULL DEFAULT 0 CHECK (next_seq >= 0),
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX runs_running_process ON runs (process_id) WHERE status = 'running';
CREATE INDEX runs_owner ON runs (owner) WHERE owner IS NOT NULL;

-- data is json, not jsonb: an event is served with the bytes it was stored with.
CREATE TABLE run_events (
    run_id text NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq    bigint NOT NULL CHECK (seq >= 0),
    kind   text NOT NULL,
    data   json NOT NULL,
    at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (run_id, seq)
);

-- NEAR AI attestation reports, kept byte for byte under their SHA-256.
CREATE TABLE attestations (
    sha256    text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    body      bytea NOT NULL,
    stored_at timestamptz NOT NULL DEFAULT now()
);
