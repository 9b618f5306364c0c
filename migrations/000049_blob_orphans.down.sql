DROP TRIGGER snapshot_blob_named ON snapshots;
DROP TRIGGER snapshot_blob_unnamed ON snapshots;
DROP TRIGGER media_blob_named ON media;
DROP TRIGGER media_blob_unnamed ON media;
DROP FUNCTION snapshot_blob_named();
DROP FUNCTION snapshot_blob_unnamed();
DROP FUNCTION media_blob_named();
DROP FUNCTION media_blob_unnamed();
DROP TABLE blob_orphans;
