-- Flower specs, named by the SHA-256 of their canonical JSON and kept when
-- proposed, validated or rendered, so a short draft link (/d/:hash) finds
-- them. The body is the canonical bytes as text (jsonb would reorder them).
CREATE TABLE specs (
    sha256          text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    snapshot_sha256 text NOT NULL CHECK (snapshot_sha256 ~ '^[0-9a-f]{64}$'),
    body            text NOT NULL,
    kept_at         timestamptz NOT NULL DEFAULT now()
);
