-- What NEAR AI reported as a request's prompt_tokens, kept so a later call
-- that starts with the same bytes is held at the provider's own count for
-- them plus one token per byte of what is new, not one token per byte of the
-- whole request (docs/money.md, "Holding what a call can cost"). Shared by
-- every replica; pruned by the retention job.
CREATE TABLE model_prompt_prefixes (
    model         text NOT NULL,
    head          text NOT NULL CHECK (head ~ '^[0-9a-f]{64}$'),
    prefix        text NOT NULL CHECK (prefix ~ '^[0-9a-f]{64}$'),
    messages      integer NOT NULL CHECK (messages > 0),
    message_bytes bigint NOT NULL CHECK (message_bytes >= 0),
    prompt_tokens bigint NOT NULL CHECK (prompt_tokens >= 0),
    seen_at       timestamptz NOT NULL,
    PRIMARY KEY (model, prefix, head)
);
CREATE INDEX model_prompt_prefixes_seen ON model_prompt_prefixes (seen_at);

-- A head (system message, tool list, effort) on a model: its own tokens are
-- at most upper_tokens and at least lower_tokens, from every request seen
-- with it.
CREATE TABLE model_prompt_heads (
    model        text NOT NULL,
    head         text NOT NULL CHECK (head ~ '^[0-9a-f]{64}$'),
    upper_tokens bigint NOT NULL,
    lower_tokens bigint NOT NULL,
    seen_at      timestamptz NOT NULL,
    PRIMARY KEY (model, head)
);

-- A model whose provider billed more input than a learned bound: held at
-- one token per byte until an operator deletes the row (petal model trust).
CREATE TABLE model_bound_distrust (
    model         text PRIMARY KEY,
    since         timestamptz NOT NULL,
    reported      bigint NOT NULL,
    bound         bigint NOT NULL,
    request_bytes bigint NOT NULL
);
