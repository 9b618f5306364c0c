-- Limits every replica shares (issue 11). UNLOGGED: a window or a slot lost in
-- a crash of PostgreSQL only forgives some calls, and these rows change on
-- every call, so they skip the WAL.

-- One fixed window per key: window_end is when it closes, count the calls
-- taken in it (at most the limit + 1: refused calls stop counting).
CREATE UNLOGGED TABLE rate_limits (
    key          text        PRIMARY KEY,
    window_end   timestamptz NOT NULL,
    count        integer     NOT NULL
);

-- Leased slots of a named semaphore (fresh reads): a row is a slot held by
-- key until lease_until, or until its holder deletes it.
CREATE UNLOGGED TABLE semaphore_slots (
    name         text        NOT NULL,
    token        text        NOT NULL,
    key          text        NOT NULL,
    lease_until  timestamptz NOT NULL,
    PRIMARY KEY (name, token)
);
