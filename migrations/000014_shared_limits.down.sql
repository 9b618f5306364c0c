DROP TABLE IF EXISTS semaphore_slots;
DROP TABLE IF EXISTS rate_limits;
