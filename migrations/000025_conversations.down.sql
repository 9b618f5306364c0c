DROP INDEX IF EXISTS explorations_owner_activity;
DROP INDEX IF EXISTS runs_exploration;
CREATE INDEX IF NOT EXISTS runs_owner ON runs (owner) WHERE owner IS NOT NULL;
DROP INDEX IF EXISTS runs_owner_activity;
ALTER TABLE runs DROP COLUMN IF EXISTS settings_effort;
ALTER TABLE runs DROP COLUMN IF EXISTS settings_model;
ALTER TABLE runs DROP COLUMN IF EXISTS title;
