-- People's profiles and the pictures they show (issue 16). A picture is
-- kept while a profile shows it; replacing a profile deletes the pictures
-- no profile shows any more, in the same transaction.
CREATE TABLE media (
    sha256     text PRIMARY KEY CHECK (sha256 ~ '^[0-9a-f]{64}$'),
    media_type text NOT NULL CHECK (media_type IN ('image/png', 'image/jpeg', 'image/webp')),
    bytes      bytea NOT NULL CHECK (octet_length(bytes) BETWEEN 1 AND 2097152),
    width      integer NOT NULL CHECK (width BETWEEN 1 AND 4096),
    height     integer NOT NULL CHECK (height BETWEEN 1 AND 4096),
    created_at timestamptz NOT NULL
);

CREATE TABLE profiles (
    person_id  text PRIMARY KEY CHECK (person_id ~ '^prs_[0-9a-f]{32}$'),
    body       text NOT NULL CHECK (octet_length(body) <= 1048576),
    updated_at timestamptz NOT NULL
);

-- Which picture each profile shows in each slot.
CREATE TABLE profile_media (
    person_id text NOT NULL REFERENCES profiles (person_id) ON DELETE CASCADE,
    slot      text NOT NULL CHECK (slot IN ('avatar', 'banner')),
    sha256    text NOT NULL REFERENCES media (sha256),
    PRIMARY KEY (person_id, slot)
);
CREATE INDEX profile_media_sha256 ON profile_media (sha256);
