-- A snapshot's origin may now be demo: the made-up reading that ships inside
-- petal (app/shipped), which names a real DAO with invented members. The one
-- stored before this migration was marked this_site; it is marked demo here
-- (its name is the SHA-256 of app/shipped/members-marketing.json).
ALTER TABLE snapshots DROP CONSTRAINT snapshots_origin_check;
ALTER TABLE snapshots ADD CONSTRAINT snapshots_origin_check CHECK (origin IN ('this_site', 'their_machine', 'demo'));
UPDATE snapshots SET origin = 'demo'
WHERE sha256 = 'a4295a442b15fbc9b5b0d89d80a3faf6d9b83e7b2159121419f138853590db06';

-- Only this site's own readings are ever a target's stored reading (a posted
-- one is served by its name, the demo never as a target's): the index
-- get_snapshot reads holds only those, so a stranger's thousand posted
-- readings of one target can't slow it down.
DROP INDEX snapshots_target_newest;
CREATE INDEX snapshots_target_newest ON snapshots (target_key, block_height DESC, stored_at DESC)
WHERE origin = 'this_site';
