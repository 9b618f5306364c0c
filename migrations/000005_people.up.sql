-- People, their wallets, sessions and sign-in challenges.
-- Tokens are never stored: a session's id is the SHA-256 of its token.
-- Wallet addresses are sealed (AES-GCM) and found by a keyed hash.
CREATE TABLE people (
    id         text PRIMARY KEY CHECK (id ~ '^prs_[0-9a-f]{32}$'),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE wallets (
    id             text PRIMARY KEY CHECK (id ~ '^wal_[0-9a-f]{32}$'),
    person_id      text NOT NULL REFERENCES people (id) ON DELETE CASCADE,
    network        text NOT NULL CHECK (network IN ('mainnet', 'testnet')),
    -- HMAC-SHA256 of near:<network>:<account> under the wallet key: one binding, one person.
    address_hash   bytea NOT NULL UNIQUE CHECK (length(address_hash) = 32),
    -- AES-GCM nonce ‖ ciphertext of the account id.
    address_sealed bytea NOT NULL,
    proved_at      timestamptz NOT NULL,
    created_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX wallets_person_id ON wallets (person_id);

CREATE TABLE sessions (
    id         text PRIMARY KEY CHECK (id ~ '^[0-9a-f]{64}$'),
    subject    text NOT NULL CHECK (subject ~ '^(prs|anon)_[0-9a-f]{32}$'),
    invite_id  text,
    wallet_id  text REFERENCES wallets (id) ON DELETE SET NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    CHECK (expires_at > created_at),
    -- Only a person's session came in with a wallet.
    CHECK (wallet_id IS NULL OR subject LIKE 'prs\_%')
);
CREATE INDEX sessions_subject ON sessions (subject);
CREATE INDEX sessions_expires_at ON sessions (expires_at);

-- NEP-413 challenges: a nonce is issued once, lives five minutes and is used once.
CREATE TABLE auth_challenges (
    nonce      bytea PRIMARY KEY CHECK (length(nonce) = 32),
    message    text NOT NULL,
    recipient  text NOT NULL,
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    CHECK (expires_at > created_at)
);
CREATE INDEX auth_challenges_expires_at ON auth_challenges (expires_at);
