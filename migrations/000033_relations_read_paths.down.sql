CREATE INDEX relation_pairs_by_b ON relation_pairs (b, a);
DROP INDEX IF EXISTS relation_pairs_of_b;
DROP INDEX IF EXISTS relation_pairs_of_a;
DROP INDEX IF EXISTS relation_members_by_share;
