DROP TABLE IF EXISTS job_positions;
