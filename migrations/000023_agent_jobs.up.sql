-- A person's own agents (docs/agents.md): the links they wait with (only the
-- token's hash kept), the workers that waited, and the jobs Petals' agent
-- hands them, each take remembering the continue link its worker got.
CREATE TABLE agent_links (
    id           text PRIMARY KEY,
    owner        text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    token_sha256 text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX agent_links_owner ON agent_links (owner, created_at);

-- One row per worker of an agent; worker '' is an agent that named none.
-- waiting_until: a wait open now ends by then (a replica that dies leaves
-- it at most MaxWaitS in the past's future, never forever).
CREATE TABLE agent_workers (
    owner         text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    agent         text NOT NULL,
    worker        text NOT NULL,
    name          text NOT NULL,
    n             integer NOT NULL,
    can           text,
    first_seen    timestamptz NOT NULL,
    last_seen     timestamptz NOT NULL,
    waiting_until timestamptz,
    PRIMARY KEY (owner, agent, worker)
);

CREATE TABLE agent_jobs (
    id           text PRIMARY KEY,
    owner        text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    run_id       text,
    exploration  text NOT NULL REFERENCES explorations (id) ON DELETE CASCADE,
    conversation text NOT NULL REFERENCES explorations (id) ON DELETE CASCADE,
    part_of      text,
    part         integer NOT NULL DEFAULT 0,
    parts        integer NOT NULL DEFAULT 0,
    kind         text NOT NULL,
    title        text NOT NULL,
    brief        text NOT NULL,
    inputs       jsonb,
    to_agent     text NOT NULL DEFAULT '',
    status       text NOT NULL CHECK (status IN ('open', 'taken', 'done', 'failed', 'stopped')),
    taken_by     text NOT NULL DEFAULT '',
    worker       text NOT NULL DEFAULT '',
    n            integer NOT NULL DEFAULT 0,
    report       text NOT NULL DEFAULT '',
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL,
    last_seen    timestamptz
);
-- What a waiter scans: the person's open jobs, oldest first.
CREATE INDEX agent_jobs_open ON agent_jobs (owner, created_at) WHERE status = 'open';
CREATE INDEX agent_jobs_exploration ON agent_jobs (exploration, created_at);
CREATE INDEX agent_jobs_conversation ON agent_jobs (conversation);
CREATE INDEX agent_jobs_ended ON agent_jobs (updated_at) WHERE status IN ('done', 'failed', 'stopped');

-- Each take of a job: the continue link its worker got (exploration_links),
-- the process that answered the wait, and whether the answer was written.
-- ended refuses the old worker once the job is stopped or sent again.
CREATE TABLE agent_job_takes (
    link_id      text PRIMARY KEY,
    job          text NOT NULL REFERENCES agent_jobs (id) ON DELETE CASCADE,
    process      text NOT NULL,
    taken_at     timestamptz NOT NULL,
    delivered_at timestamptz,
    ended        text CHECK (ended IN ('stopped', 'handed_over', 'released', 'reported'))
);
CREATE INDEX agent_job_takes_job ON agent_job_takes (job);
CREATE INDEX agent_job_takes_undelivered ON agent_job_takes (taken_at) WHERE delivered_at IS NULL AND ended IS NULL;
