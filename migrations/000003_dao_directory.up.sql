-- The Sputnik factory's DAO list per chain, refreshed at most daily, which
-- find_target matches words against.
CREATE TABLE dao_directory_reads (
    chain   text PRIMARY KEY,
    read_at timestamptz NOT NULL,
    count   integer NOT NULL CHECK (count >= 0)
);
CREATE TABLE dao_directory (
    chain      text NOT NULL REFERENCES dao_directory_reads (chain) ON DELETE CASCADE,
    account_id text NOT NULL,
    PRIMARY KEY (chain, account_id)
);
