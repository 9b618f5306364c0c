-- Bodies in object storage (issue 31 #1): a snapshot's gzipped body and a
-- picture's bytes may live in the blob store (PETAL_BLOB_URL) instead of
-- these columns. body_blob / bytes_blob is the blob's key, the hex SHA-256
-- of the stored bytes (the gzip, for a snapshot: not the snapshot's name,
-- which hashes the inflated JSON); a row holds its bytes in exactly one
-- place, so the move job's one UPDATE nulls the column and sets the key.
ALTER TABLE snapshots ALTER COLUMN body_gzip DROP NOT NULL,
    ADD COLUMN body_blob text CHECK (body_blob ~ '^[0-9a-f]{64}$'),
    ADD CONSTRAINT snapshots_body_somewhere CHECK ((body_gzip IS NULL) <> (body_blob IS NULL));
ALTER TABLE media ALTER COLUMN bytes DROP NOT NULL,
    ADD COLUMN bytes_blob text CHECK (bytes_blob ~ '^[0-9a-f]{64}$'),
    ADD CONSTRAINT media_bytes_somewhere CHECK ((bytes IS NULL) <> (bytes_blob IS NULL));
-- The move job's batches look for rows still holding their bytes.
CREATE INDEX snapshots_body_in_row ON snapshots (sha256) WHERE body_gzip IS NOT NULL;
CREATE INDEX media_bytes_in_row ON media (sha256) WHERE bytes IS NOT NULL;
