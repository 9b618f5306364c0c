-- shared_accounts between two large groups (docs/relations.md, Speed): a
-- page by the smaller of two shares has to read thousands of both groups'
-- members down to a threshold. For the pairs where that is heavy, the first
-- pages are kept instead: the top accounts by the smaller share, written
-- when either group is rebuilt, in the transaction that rewrites the pair.

-- The work a page asks of the groups' members (index entries read; a key
-- lookup counts as 10), as RelationRepository.Shared does it: the smaller
-- group read down to where about two pages of shared accounts are expected
-- (count·(r/small)² = 104, were the shares independent), and the larger
-- one either read down to the same share or looked up account by account.
CREATE FUNCTION relation_shared_work(small bigint, large bigint, shared bigint) RETURNS double precision
    LANGUAGE sql IMMUTABLE PARALLEL SAFE
    RETURN least(small, small * sqrt(104.0 / greatest(shared, 1)))
         * least(1 + large::double precision / greatest(small, 1), 10);

-- How many of the pair's top shared accounts relation_shared_top holds (0:
-- none, the pages are read from the members).
ALTER TABLE relation_pairs ADD COLUMN kept integer NOT NULL DEFAULT 0 CHECK (kept >= 0 AND kept <= shared);

CREATE TABLE relation_shared_top (
    a           text NOT NULL,
    b           text NOT NULL,
    account     text NOT NULL,
    a_weight    numeric NOT NULL,
    a_e12       bigint NOT NULL,
    b_weight    numeric NOT NULL,
    b_e12       bigint NOT NULL,
    smaller_e12 bigint NOT NULL,
    CHECK (a < b)
);
CREATE UNIQUE INDEX relation_shared_top_by_smaller ON relation_shared_top (a, b, smaller_e12 DESC, account);
CREATE INDEX relation_shared_top_of_b ON relation_shared_top (b);

-- Looking an account up in a group reads its share from the key alone
-- (without it the planner walks relation_members_by_account, all of a hub
-- account's thousands of groups, for each lookup).
ALTER TABLE relation_members DROP CONSTRAINT relation_members_pkey,
    ADD CONSTRAINT relation_members_pkey PRIMARY KEY (group_id, account) INCLUDE (share_e12);
