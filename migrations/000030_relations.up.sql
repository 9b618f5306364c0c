-- Relations (docs/relations.md): who holds what across the map. A group is a
-- map (its id) with the accounts of its newest holdings reading on the site.

-- Every reading offered for a group, so "the newest reading of a map" is
-- decided here, in the transaction that rebuilds its members.
CREATE TABLE relation_readings (
    group_id        text NOT NULL CHECK (length(group_id) BETWEEN 1 AND 200),
    snapshot_sha256 text NOT NULL CHECK (snapshot_sha256 ~ '^[0-9a-f]{64}$'),
    as_of           timestamptz NOT NULL,
    offered_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (group_id, snapshot_sha256)
);

-- One row per group: the reading its members are from.
CREATE TABLE relation_groups (
    group_id        text PRIMARY KEY CHECK (length(group_id) BETWEEN 1 AND 200),
    snapshot_sha256 text NOT NULL CHECK (snapshot_sha256 ~ '^[0-9a-f]{64}$'),
    as_of           timestamptz NOT NULL,
    reader          text NOT NULL,
    kind            text NOT NULL,
    title           text NOT NULL,
    members         integer NOT NULL CHECK (members >= 0),
    total           numeric NOT NULL,
    rebuilt_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX relation_groups_by_kind ON relation_groups (kind, group_id);

-- One row per (group, account): its weight as read, its share of the group's
-- total weight times 10^12 (rounded half up once) and its rank by share.
CREATE TABLE relation_members (
    group_id  text NOT NULL REFERENCES relation_groups (group_id) ON DELETE CASCADE,
    account   text NOT NULL CHECK (length(account) BETWEEN 1 AND 300),
    weight    numeric NOT NULL,
    share_e12 bigint NOT NULL CHECK (share_e12 BETWEEN 0 AND 1000000000000),
    rank      integer NOT NULL CHECK (rank >= 1),
    PRIMARY KEY (group_id, account)
);
-- account_groups: an account's groups by share, largest first.
CREATE INDEX relation_members_by_account ON relation_members (account, share_e12 DESC, group_id);

-- Each pair of groups that share an account (a < b): how many, and the sum
-- of each side's shares those accounts hold. Rewritten for a group when it
-- is rebuilt, so no request counts pairs.
CREATE TABLE relation_pairs (
    a        text NOT NULL,
    b        text NOT NULL,
    shared   integer NOT NULL CHECK (shared > 0),
    a_e12    bigint NOT NULL,
    b_e12    bigint NOT NULL,
    PRIMARY KEY (a, b),
    CHECK (a < b)
);
CREATE INDEX relation_pairs_by_b ON relation_pairs (b, a);
CREATE INDEX relation_pairs_by_shared ON relation_pairs (shared DESC, a, b);
