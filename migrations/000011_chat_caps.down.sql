DROP INDEX IF EXISTS credit_holds_chat;
ALTER TABLE credit_holds DROP COLUMN IF EXISTS chat_id;
