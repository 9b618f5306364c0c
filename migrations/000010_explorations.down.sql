DROP TABLE IF EXISTS exploration_readings;
DROP TABLE IF EXISTS exploration_idempotency;
DROP TABLE IF EXISTS exploration_links;
DROP TABLE IF EXISTS exploration_notes;
DROP TABLE IF EXISTS exploration_steps;
DROP TABLE IF EXISTS explorations;
