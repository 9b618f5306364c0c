-- related_groups reads the top of a group's pairs by walking an index in
-- each order from both sides (a group is a in some pairs, b in the others)
-- instead of sorting all of its pairs (docs/relations.md, Speed).
--
-- Jaccard needs both groups' sizes in the pair row. They are kept true the
-- way the counts are: a group's pair rows are all rewritten when it is
-- rebuilt, and its size changes only then.
ALTER TABLE relation_pairs ADD COLUMN a_members integer, ADD COLUMN b_members integer;
UPDATE relation_pairs p SET a_members = ga.members, b_members = gb.members
FROM relation_groups ga, relation_groups gb WHERE ga.group_id = p.a AND gb.group_id = p.b;
ALTER TABLE relation_pairs ALTER COLUMN a_members SET NOT NULL, ALTER COLUMN b_members SET NOT NULL,
    ADD CHECK (shared <= a_members AND shared <= b_members);
-- floor(shared / union * 10^18): two different fractions with unions under
-- 10^9 differ by more than 10^-18, so this integer orders Jaccard indices
-- exactly, equal ones alike (numeric division alone rounds at a scale that
-- depends on its operands).
ALTER TABLE relation_pairs ADD COLUMN jaccard_key bigint
    GENERATED ALWAYS AS (div(shared::numeric * 1000000000000000000, a_members + b_members - shared)::bigint) STORED;

CREATE INDEX relation_pairs_a_by_count ON relation_pairs (a, shared DESC, b);
CREATE INDEX relation_pairs_b_by_count ON relation_pairs (b, shared DESC, a);
CREATE INDEX relation_pairs_a_by_jaccard ON relation_pairs (a, jaccard_key DESC, b);
CREATE INDEX relation_pairs_b_by_jaccard ON relation_pairs (b, jaccard_key DESC, a);
CREATE INDEX relation_pairs_a_by_weight ON relation_pairs (a, b_e12 DESC, b);
CREATE INDEX relation_pairs_b_by_weight ON relation_pairs (b, a_e12 DESC, a);
DROP INDEX relation_pairs_of_a;
DROP INDEX relation_pairs_of_b;
