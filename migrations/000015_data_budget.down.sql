DROP INDEX IF EXISTS exploration_readings_new_owner;
DROP INDEX IF EXISTS exploration_readings_new_address;
ALTER TABLE exploration_readings DROP COLUMN IF EXISTS owner, DROP COLUMN IF EXISTS address;
DROP TABLE IF EXISTS data_budget_days;
