ALTER TABLE relation_members DROP CONSTRAINT relation_members_pkey,
    ADD CONSTRAINT relation_members_pkey PRIMARY KEY (group_id, account);
DROP TABLE IF EXISTS relation_shared_top;
ALTER TABLE relation_pairs DROP COLUMN IF EXISTS kept;
DROP FUNCTION IF EXISTS relation_shared_work(bigint, bigint, bigint);
