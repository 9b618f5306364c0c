-- Layers (layer/v1) and dataset versions (dataset/v1), kept in an
-- exploration, under whoever owns it, each once by the SHA-256 of its
-- canonical JSON (body). A version holds its change from its parent;
-- accounts is how many its list holds, counted when it was made.
CREATE TABLE layers (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    exploration text NOT NULL REFERENCES explorations (id) ON DELETE CASCADE,
    hash        text NOT NULL,
    about       text NOT NULL,
    body        text NOT NULL,
    created_at  timestamptz NOT NULL,
    UNIQUE (exploration, hash)
);
CREATE INDEX layers_hash ON layers (hash);

CREATE TABLE dataset_versions (
    seq         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    exploration text NOT NULL REFERENCES explorations (id) ON DELETE CASCADE,
    hash        text NOT NULL,
    about       text NOT NULL,
    body        text NOT NULL,
    accounts    integer NOT NULL,
    created_at  timestamptz NOT NULL,
    UNIQUE (exploration, hash)
);
CREATE INDEX dataset_versions_hash ON dataset_versions (hash);
