-- The per-chat cap counts each chat (each POST /api/v1/agent/chat, a
-- follow-up on a run included), not the whole run: a hold names its chat.
-- Holds from before counted per run, so their chat is their run.
ALTER TABLE credit_holds ADD COLUMN chat_id text;
UPDATE credit_holds SET chat_id = run_id;
CREATE INDEX credit_holds_chat ON credit_holds (chat_id, account_id);
