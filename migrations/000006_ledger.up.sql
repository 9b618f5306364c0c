-- The ledger and invites. Money is integer micro-dollars (bigint).
-- The constraints hold the invariants even against a bug in the code.

-- An account: an invite's budget, a person's credit, or one UTC day's cap.
CREATE TABLE credit_accounts (
    id           text PRIMARY KEY,
    kind         text NOT NULL CHECK (kind IN ('invite', 'person', 'daily')),
    limit_micros bigint NOT NULL CHECK (limit_micros >= 0),
    spent_micros bigint NOT NULL DEFAULT 0 CHECK (spent_micros >= 0),
    held_micros  bigint NOT NULL DEFAULT 0 CHECK (held_micros >= 0),
    expires_at   timestamptz,
    revoked_at   timestamptz,
    created_at   timestamptz NOT NULL DEFAULT now(),
    CHECK (id LIKE kind || ':%'),
    CHECK (kind = 'invite' OR (expires_at IS NULL AND revoked_at IS NULL))
);

-- An invite: only the hash of its token is stored; its budget, end and
-- revocation live in its account.
CREATE TABLE invites (
    id         text PRIMARY KEY CHECK (id ~ '^inv_[0-9a-f]{32}$'),
    token_hash text NOT NULL UNIQUE CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    account_id text NOT NULL UNIQUE REFERENCES credit_accounts (id),
    created_at timestamptz NOT NULL,
    CHECK (account_id = 'invite:' || id)
);

ALTER TABLE sessions
    ADD CONSTRAINT sessions_invite_id_fkey FOREIGN KEY (invite_id) REFERENCES invites (id);

-- A hold: what one model call reserves on one account. A reservation (one
-- call) is the holds sharing reservation_id, one per paying account.
CREATE TABLE credit_holds (
    reservation_id text NOT NULL,
    account_id     text NOT NULL REFERENCES credit_accounts (id),
    run_id         text NOT NULL,
    process_id     text NOT NULL,
    payer          jsonb NOT NULL,
    amount_micros  bigint NOT NULL CHECK (amount_micros > 0),
    status         text NOT NULL DEFAULT 'held' CHECK (status IN ('held', 'settled', 'released')),
    charged_micros bigint CHECK (charged_micros >= 0),
    created_at     timestamptz NOT NULL DEFAULT now(),
    closed_at      timestamptz,
    PRIMARY KEY (reservation_id, account_id),
    CHECK ((status = 'settled') = (charged_micros IS NOT NULL)),
    CHECK ((status = 'held') = (closed_at IS NULL))
);
CREATE INDEX credit_holds_open ON credit_holds (process_id) WHERE status = 'held';
CREATE INDEX credit_holds_run ON credit_holds (run_id, account_id);

-- An entry: every movement on an account, for the record. A charge is never
-- negative; only a reconciliation with the provider's bill may give back.
CREATE TABLE credit_entries (
    id             bigserial PRIMARY KEY,
    account_id     text NOT NULL REFERENCES credit_accounts (id),
    kind           text NOT NULL CHECK (kind IN ('call', 'fee', 'tip', 'top_up', 'reconcile')),
    amount_micros  bigint NOT NULL,
    reservation_id text,
    run_id         text,
    note           text NOT NULL DEFAULT '',
    created_at     timestamptz NOT NULL DEFAULT now(),
    CHECK (kind = 'reconcile' OR amount_micros >= 0)
);
CREATE INDEX credit_entries_account ON credit_entries (account_id, id);
