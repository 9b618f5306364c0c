-- People's views (view/v1, issue 16): every view anyone kept, by its name,
-- and each person's own. There are few views (3 palettes × 2 label modes ×
-- 62 label limits), so the kept ones stay for good and need no retention.
CREATE TABLE views (
    hash     text PRIMARY KEY CHECK (hash ~ '^[0-9a-f]{64}$'),
    body     text NOT NULL CHECK (octet_length(body) <= 1024),
    first_at timestamptz NOT NULL
);

-- A person's view, with the credential of the session that kept it (the
-- wallet it signed in with) and when. One row a person.
CREATE TABLE person_views (
    person_id  text PRIMARY KEY CHECK (person_id ~ '^prs_[0-9a-f]{32}$'),
    view_hash  text NOT NULL REFERENCES views (hash),
    credential text NOT NULL DEFAULT '',
    session_id text NOT NULL CHECK (session_id ~ '^[0-9a-f]{64}$'),
    kept_at    timestamptz NOT NULL
);
