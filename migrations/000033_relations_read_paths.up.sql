-- Read paths the relations benchmark asked for (docs/relations.md, Speed).
-- shared_accounts reads a group's members by share, largest first, down to
-- a threshold.
CREATE INDEX relation_members_by_share ON relation_members (group_id, share_e12 DESC, account);
-- related_groups reads every pair of one group from either side: a group's
-- pairs as b were written by other groups' rebuilds, all over the heap, so
-- both sides are read from covering indexes instead.
CREATE INDEX relation_pairs_of_a ON relation_pairs (a) INCLUDE (b, shared, a_e12, b_e12);
CREATE INDEX relation_pairs_of_b ON relation_pairs (b) INCLUDE (a, shared, a_e12, b_e12);
DROP INDEX relation_pairs_by_b;
