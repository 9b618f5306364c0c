DROP TABLE IF EXISTS scheduled_jobs;
