-- Conversations (GET /api/v1/conversations): a run's name, given by Petals'
-- agent (name_conversation), and the model and effort its chats run on
-- (settings). The list is one query over runs and explorations by owner,
-- newest activity first, paged by (updated_at, id): these indexes serve it
-- from its first row, and runs_exploration hides a run's own exploration,
-- which the run's entry carries.
ALTER TABLE runs ADD COLUMN title text NOT NULL DEFAULT '' CHECK (char_length(title) <= 200);
ALTER TABLE runs ADD COLUMN settings_model text;
ALTER TABLE runs ADD COLUMN settings_effort text;
CREATE INDEX runs_owner_activity ON runs (owner, updated_at DESC, id DESC) WHERE owner IS NOT NULL;
DROP INDEX runs_owner;
CREATE INDEX runs_exploration ON runs (exploration) WHERE exploration IS NOT NULL;
CREATE INDEX explorations_owner_activity ON explorations (owner, updated_at DESC, id DESC) WHERE owner <> '';
