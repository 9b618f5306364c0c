DROP INDEX IF EXISTS exploration_idempotency_created_at;
DROP INDEX IF EXISTS explorations_anonymous_last_seen;
DROP INDEX IF EXISTS runs_anonymous_last_seen;
ALTER TABLE explorations DROP COLUMN IF EXISTS opened_at;
ALTER TABLE runs DROP COLUMN IF EXISTS opened_at;
