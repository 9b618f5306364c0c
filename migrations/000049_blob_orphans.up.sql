-- Blobs no row names any more (issue 31's "blobs are never deleted"): a row
-- deleted while its bytes live in the blob store leaves its key here, and
-- the delete_blobs job deletes the blob once the key has been unnamed for a
-- while. A row that names a key again (a picture uploaded anew, a move)
-- deletes its line here in the same statement, so the job, which holds the
-- line locked while it deletes the blob, and a writer naming the key take
-- turns: the writer then checks the blob is there and writes it again if
-- the job got there first (adapters/postgres/bodies.go).
CREATE TABLE blob_orphans (
    key text PRIMARY KEY CHECK (key ~ '^[0-9a-f]{64}$'),
    kind text NOT NULL CHECK (kind IN ('snapshots', 'pictures')),
    orphaned_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX blob_orphans_by_age ON blob_orphans (orphaned_at);

CREATE FUNCTION media_blob_unnamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO blob_orphans (key, kind) VALUES (OLD.bytes_blob, 'pictures') ON CONFLICT (key) DO NOTHING;
    RETURN NULL;
END $$;
CREATE FUNCTION media_blob_named() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM blob_orphans WHERE key = NEW.bytes_blob;
    RETURN NULL;
END $$;
CREATE FUNCTION snapshot_blob_unnamed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO blob_orphans (key, kind) VALUES (OLD.body_blob, 'snapshots') ON CONFLICT (key) DO NOTHING;
    RETURN NULL;
END $$;
CREATE FUNCTION snapshot_blob_named() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM blob_orphans WHERE key = NEW.body_blob;
    RETURN NULL;
END $$;

CREATE TRIGGER media_blob_unnamed AFTER DELETE ON media
    FOR EACH ROW WHEN (OLD.bytes_blob IS NOT NULL) EXECUTE FUNCTION media_blob_unnamed();
CREATE TRIGGER media_blob_named AFTER INSERT OR UPDATE OF bytes_blob ON media
    FOR EACH ROW WHEN (NEW.bytes_blob IS NOT NULL) EXECUTE FUNCTION media_blob_named();
CREATE TRIGGER snapshot_blob_unnamed AFTER DELETE ON snapshots
    FOR EACH ROW WHEN (OLD.body_blob IS NOT NULL) EXECUTE FUNCTION snapshot_blob_unnamed();
CREATE TRIGGER snapshot_blob_named AFTER INSERT OR UPDATE OF body_blob ON snapshots
    FOR EACH ROW WHEN (NEW.body_blob IS NOT NULL) EXECUTE FUNCTION snapshot_blob_named();
