DROP TABLE IF EXISTS rate_limit_reserved;
DROP TABLE IF EXISTS rate_limit_claims;
DROP TABLE IF EXISTS rate_limit_replicas;
