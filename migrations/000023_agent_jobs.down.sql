DROP TABLE agent_job_takes;
DROP TABLE agent_jobs;
DROP TABLE agent_workers;
DROP TABLE agent_links;
