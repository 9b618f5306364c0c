DROP INDEX snapshots_target_newest;
CREATE INDEX snapshots_target_newest ON snapshots (target_key, block_height DESC, stored_at DESC);
UPDATE snapshots SET origin = 'this_site' WHERE origin = 'demo';
ALTER TABLE snapshots DROP CONSTRAINT snapshots_origin_check;
ALTER TABLE snapshots ADD CONSTRAINT snapshots_origin_check CHECK (origin IN ('this_site', 'their_machine'));
