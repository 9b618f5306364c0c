-- Annotations: claims (claim/v2) people and their agents keep about accounts,
-- privately under the project's owner. One in an exploration belongs to
-- whoever owns the exploration (so sign-in moves it with the exploration);
-- one in no project is its person's (owner). scope is the exploration's id or
-- the person's, and a claim is kept once per scope, by its id (the SHA-256 of
-- its content). claim is the claim's JSON as answered.
CREATE TABLE annotations (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    scope       text NOT NULL,
    exploration text REFERENCES explorations (id) ON DELETE CASCADE,
    owner       text NOT NULL DEFAULT '',
    id          text NOT NULL,
    subject     text NOT NULL,
    verb        text NOT NULL,
    claim       text NOT NULL,
    added_at    timestamptz NOT NULL,
    UNIQUE (scope, id),
    CHECK ((exploration IS NULL) <> (owner = ''))
);
CREATE INDEX annotations_exploration ON annotations (exploration, seq) WHERE exploration IS NOT NULL;
CREATE INDEX annotations_owner ON annotations (owner, seq) WHERE exploration IS NULL;
