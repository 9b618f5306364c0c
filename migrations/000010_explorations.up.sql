-- Explorations: a person's (or an anonymous session's) project. owner is the
-- session subject (prs_… or anon_…), '' for one made through a door without a
-- session; sign-in moves an anonymous owner's explorations to the person.
CREATE TABLE explorations (
    id         text PRIMARY KEY,
    owner      text NOT NULL DEFAULT '',
    question   text NOT NULL,
    title      text NOT NULL DEFAULT '',
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX explorations_owner ON explorations (owner, created_at DESC) WHERE owner <> '';

CREATE TABLE exploration_steps (
    id          text PRIMARY KEY,
    exploration text NOT NULL REFERENCES explorations (id) ON DELETE CASCADE,
    seq         integer NOT NULL,
    spec_sha256 text NOT NULL,
    spec        text, -- the canonical JSON of a spec sent inline
    note        text NOT NULL DEFAULT '',
    created_at  timestamptz NOT NULL,
    UNIQUE (exploration, seq)
);

CREATE TABLE exploration_notes (
    id          text PRIMARY KEY,
    exploration text NOT NULL REFERENCES explorations (id) ON DELETE CASCADE,
    text        text NOT NULL,
    created_at  timestamptz NOT NULL
);
CREATE INDEX exploration_notes_exploration ON exploration_notes (exploration, created_at);

-- Links: only the SHA-256 of a token is kept.
CREATE TABLE exploration_links (
    id           text PRIMARY KEY,
    exploration  text NOT NULL REFERENCES explorations (id) ON DELETE CASCADE,
    scope        text NOT NULL CHECK (scope IN ('read', 'continue')),
    token_sha256 text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL,
    revoked_at   timestamptz
);
CREATE INDEX exploration_links_exploration ON exploration_links (exploration, created_at);

-- Idempotency-Key: one answer per caller and key. answer is NULL while the
-- first request runs.
CREATE TABLE exploration_idempotency (
    caller      text NOT NULL,
    key         text NOT NULL,
    fingerprint text NOT NULL,
    answer      bytea,
    created_at  timestamptz NOT NULL,
    PRIMARY KEY (caller, key)
);

-- Readings posted to an exploration (PUT …/snapshots/:sha256). is_new marks
-- the ones the site did not hold before, which count against the daily cap.
CREATE TABLE exploration_readings (
    exploration text NOT NULL REFERENCES explorations (id) ON DELETE CASCADE,
    sha256      text NOT NULL,
    is_new      boolean NOT NULL,
    posted_at   timestamptz NOT NULL,
    PRIMARY KEY (exploration, sha256)
);
CREATE INDEX exploration_readings_new ON exploration_readings (posted_at) WHERE is_new;
