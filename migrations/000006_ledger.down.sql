DROP TABLE IF EXISTS credit_entries;
DROP TABLE IF EXISTS credit_holds;
ALTER TABLE sessions DROP CONSTRAINT IF EXISTS sessions_invite_id_fkey;
DROP TABLE IF EXISTS invites;
DROP TABLE IF EXISTS credit_accounts;
