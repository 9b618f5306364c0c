DROP TABLE IF EXISTS credit_usage;
DROP TABLE IF EXISTS credit_topups;
DROP TABLE IF EXISTS person_settings;
