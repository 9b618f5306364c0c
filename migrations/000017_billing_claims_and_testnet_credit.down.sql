ALTER TABLE credit_entries DROP COLUMN IF EXISTS testnet;
DROP TABLE IF EXISTS billing_claims;
