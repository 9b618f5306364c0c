-- Retention (the scheduled job "retention"): when a run or an exploration was
-- last opened, so an anonymous one nobody opens any more can go after
-- PETAL_RETAIN_ANON_DAYS; existing ones count as opened now. The indexes let
-- each batch find its rows without scanning the tables.
ALTER TABLE runs ADD COLUMN opened_at timestamptz NOT NULL DEFAULT now();
ALTER TABLE explorations ADD COLUMN opened_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX runs_anonymous_last_seen ON runs (greatest(updated_at, opened_at))
    WHERE owner IS NULL OR owner LIKE 'anon\_%';
CREATE INDEX explorations_anonymous_last_seen ON explorations (greatest(updated_at, opened_at))
    WHERE owner = '' OR owner LIKE 'anon\_%';
CREATE INDEX exploration_idempotency_created_at ON exploration_idempotency (created_at);
