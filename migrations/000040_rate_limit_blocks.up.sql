-- Shared limits hand out blocks of calls (adapters/postgres/limits_lease.go):
-- a statement may take several calls of a window at once, never past its
-- limit. lim is the limit the window was last checked under, so the
-- statement can cap the count inside ON CONFLICT; taken is what that last
-- statement took, which the caller reads back (PostgreSQL 15 can't return a
-- row's value from before an upsert). count now stops at the limit: refused
-- calls no longer count, so calls a replica gives back can be taken again.
ALTER TABLE rate_limits
    ADD COLUMN lim   integer NOT NULL DEFAULT 0,
    ADD COLUMN taken integer NOT NULL DEFAULT 0;
