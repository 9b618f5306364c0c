-- A person's settings, NEAR top-ups and usage records.

-- The person's tip: a percent of each call's bill, NULL for none set.
CREATE TABLE person_settings (
    person_id   text PRIMARY KEY REFERENCES people (id) ON DELETE CASCADE,
    tip_percent integer CHECK (tip_percent BETWEEN 0 AND 50),
    updated_at  timestamptz NOT NULL DEFAULT now()
);

-- A top-up: one NEAR transfer onto a person's credit. Keyed by the
-- transaction's hash, so one transfer counts once however often it is sent.
CREATE TABLE credit_topups (
    tx_hash         text PRIMARY KEY CHECK (tx_hash ~ '^[1-9A-HJ-NP-Za-km-z]{32,44}$'),
    network         text NOT NULL CHECK (network IN ('mainnet', 'testnet')),
    person_id       text NOT NULL REFERENCES people (id),
    wallet_id       text NOT NULL REFERENCES wallets (id),
    account_id      text NOT NULL REFERENCES credit_accounts (id),
    yocto           numeric(40, 0) NOT NULL CHECK (yocto > 0),
    near_usd_micros bigint NOT NULL CHECK (near_usd_micros > 0),
    added_micros    bigint NOT NULL CHECK (added_micros >= 0),
    fee_micros      bigint NOT NULL DEFAULT 0 CHECK (fee_micros >= 0),
    created_at      timestamptz NOT NULL DEFAULT now(),
    CHECK (account_id = 'person:' || person_id)
);
CREATE INDEX credit_topups_person ON credit_topups (person_id, created_at DESC);

-- usage/v1: one record per model call charged to a person's credit.
CREATE TABLE credit_usage (
    reservation_id    text PRIMARY KEY,
    account_id        text NOT NULL REFERENCES credit_accounts (id),
    run_id            text NOT NULL,
    inference_id      text NOT NULL DEFAULT '',
    model             text NOT NULL DEFAULT '',
    tokens_in         integer NOT NULL DEFAULT 0 CHECK (tokens_in >= 0),
    tokens_cached     integer NOT NULL DEFAULT 0 CHECK (tokens_cached >= 0),
    tokens_out        integer NOT NULL DEFAULT 0 CHECK (tokens_out >= 0),
    list_micros       bigint NOT NULL CHECK (list_micros >= 0),
    charged_micros    bigint NOT NULL CHECK (charged_micros >= 0),
    billed_micros     bigint CHECK (billed_micros >= 0),
    reconciled_micros bigint NOT NULL DEFAULT 0,
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX credit_usage_account ON credit_usage (account_id, created_at DESC);
