-- Refused (NOT NULL fails) while any body lives only in the blob store:
-- moving bodies back into PostgreSQL is not something this file can do.
DROP INDEX media_bytes_in_row;
DROP INDEX snapshots_body_in_row;
ALTER TABLE media DROP CONSTRAINT media_bytes_somewhere, DROP COLUMN bytes_blob, ALTER COLUMN bytes SET NOT NULL;
ALTER TABLE snapshots DROP CONSTRAINT snapshots_body_somewhere, DROP COLUMN body_blob, ALTER COLUMN body_gzip SET NOT NULL;
