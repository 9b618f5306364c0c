-- Quotes for chats (issue 18): the most a chat can cost, priced before any
-- spend, for its thread only, used once within five minutes. Retention
-- deletes them a day after they expire.
CREATE TABLE chat_quotes (
    id            text PRIMARY KEY CHECK (id ~ '^quo_[0-9a-f]{32}$'),
    thread_sha256 text NOT NULL CHECK (thread_sha256 ~ '^[0-9a-f]{64}$'),
    run_id        text NOT NULL DEFAULT '',
    max_micros    bigint NOT NULL CHECK (max_micros >= 0),
    payer         text NOT NULL CHECK (payer IN ('', 'invite', 'credit', 'open')),
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX chat_quotes_expires_at ON chat_quotes (expires_at);
