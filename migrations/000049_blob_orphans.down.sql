DROP TRIGGER IF EXISTS snapshot_blob_named ON snapshots;
DROP TRIGGER IF EXISTS snapshot_blob_unnamed ON snapshots;
DROP TRIGGER IF EXISTS media_blob_named ON media;
DROP TRIGGER IF EXISTS media_blob_unnamed ON media;
DROP FUNCTION IF EXISTS snapshot_blob_named();
DROP FUNCTION IF EXISTS snapshot_blob_unnamed();
DROP FUNCTION IF EXISTS media_blob_named();
DROP FUNCTION IF EXISTS media_blob_unnamed();
DROP TABLE IF EXISTS blob_orphans;
