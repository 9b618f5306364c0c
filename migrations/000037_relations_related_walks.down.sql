CREATE INDEX relation_pairs_of_a ON relation_pairs (a) INCLUDE (b, shared, a_e12, b_e12);
CREATE INDEX relation_pairs_of_b ON relation_pairs (b) INCLUDE (a, shared, a_e12, b_e12);
DROP INDEX IF EXISTS relation_pairs_b_by_weight;
DROP INDEX IF EXISTS relation_pairs_a_by_weight;
DROP INDEX IF EXISTS relation_pairs_b_by_jaccard;
DROP INDEX IF EXISTS relation_pairs_a_by_jaccard;
DROP INDEX IF EXISTS relation_pairs_b_by_count;
DROP INDEX IF EXISTS relation_pairs_a_by_count;
ALTER TABLE relation_pairs DROP COLUMN jaccard_key, DROP COLUMN b_members, DROP COLUMN a_members;
