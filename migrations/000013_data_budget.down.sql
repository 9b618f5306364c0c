DROP INDEX exploration_readings_new_owner;
DROP INDEX exploration_readings_new_address;
ALTER TABLE exploration_readings DROP COLUMN owner, DROP COLUMN address;
DROP TABLE data_budget_days;
