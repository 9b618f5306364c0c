-- Search (docs/search.md): what search_petals finds, one row per thing, kept
-- by triggers in the same transactions that write its sources, so a search
-- reads one GIN index instead of a UNION of tsvectors built per request.
-- owner is NULL for the map's rows (anyone's) and the owning session subject
-- for a person's own work (explorations, notes, annotations); a search only
-- ever matches owner IS NULL or owner = the caller's own subject.
CREATE TABLE search_docs (
    kind        text NOT NULL CHECK (kind IN ('map', 'flower', 'exploration', 'note', 'annotation')),
    ref         text NOT NULL,  -- the source row's key
    id          text NOT NULL,  -- the id answered (map id, flower id, exploration, note or claim id)
    owner       text,
    exploration text REFERENCES explorations (id) ON DELETE CASCADE,
    map         text,           -- the map a map or flower row is of (hidden maps are filtered by it)
    about       text,           -- an annotation's subject
    title       text NOT NULL,
    body        text NOT NULL,
    at          timestamptz NOT NULL,
    -- Account ids (marketing.sputnik-dao.near) are one token to the parser:
    -- each text is indexed once as written and once split at . _ - : / @, so
    -- "marketing" and "sputnik" find it too. 'simple': no stemming, no stop
    -- words, the same for every language and for ids.
    tsv tsvector GENERATED ALWAYS AS (
        setweight(to_tsvector('simple', title || ' ' || translate(title, '._-:/@', '      ')), 'A') ||
        setweight(to_tsvector('simple', body || ' ' || translate(body, '._-:/@', '      ')), 'B')) STORED,
    PRIMARY KEY (kind, ref),
    CHECK ((owner IS NULL) = (kind IN ('map', 'flower')))
);
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
CREATE INDEX search_docs_exploration ON search_docs (exploration) WHERE exploration IS NOT NULL;

-- A flower's row: on the map only once its snapshot is here (status ok).
CREATE FUNCTION petal_search_flower(flower text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM search_docs WHERE kind = 'flower' AND ref = flower;
    INSERT INTO search_docs (kind, ref, id, owner, map, title, body, at)
    SELECT 'flower', f.id, f.id, NULL, f.map,
           left(coalesce(f.name, s.title, f.record::jsonb -> 'spec' ->> 'title', f.map), 500),
           left(concat_ws(' ', f.record::jsonb ->> 'about', f.record::jsonb -> 'spec' ->> 'title',
                          s.title, s.about, f.map, f.maker), 4000),
           f.published_at
    FROM published_flowers f LEFT JOIN snapshots s ON s.sha256 = f.snapshot_sha256
    WHERE f.id = flower AND f.status = 'ok';
END $$;

-- A map's row: its newest named drawing's name (else its newest reading's
-- title) and the words of its newest 50 drawings.
CREATE FUNCTION petal_search_map(m text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DELETE FROM search_docs WHERE kind = 'map' AND ref = m;
    INSERT INTO search_docs (kind, ref, id, owner, map, title, body, at)
    SELECT 'map', m, m, NULL, m,
           left(coalesce((array_agg(d.name ORDER BY d.published_at DESC) FILTER (WHERE d.name IS NOT NULL))[1],
                         (array_agg(d.stitle ORDER BY d.published_at DESC) FILTER (WHERE d.stitle IS NOT NULL))[1], m), 500),
           left(concat_ws(' ', m, string_agg(concat_ws(' ', d.name, d.about, d.stitle, d.sabout, d.maker), ' ')), 8000),
           max(d.published_at)
    FROM (SELECT f.name, f.record::jsonb ->> 'about' AS about, s.title AS stitle, s.about AS sabout,
                 f.maker, f.published_at
          FROM published_flowers f LEFT JOIN snapshots s ON s.sha256 = f.snapshot_sha256
          WHERE f.map = m AND f.status = 'ok'
          ORDER BY f.published_at DESC LIMIT 50) d
    HAVING count(*) > 0;
END $$;

CREATE FUNCTION petal_search_flowers_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_docs WHERE kind = 'flower' AND ref = OLD.id;
        PERFORM petal_search_map(OLD.map);
        RETURN OLD;
    END IF;
    PERFORM petal_search_flower(NEW.id);
    PERFORM petal_search_map(NEW.map);
    IF TG_OP = 'UPDATE' AND OLD.map <> NEW.map THEN
        PERFORM petal_search_map(OLD.map);
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER search_flowers AFTER INSERT OR UPDATE OR DELETE ON published_flowers
    FOR EACH ROW EXECUTE FUNCTION petal_search_flowers_trigger();

CREATE FUNCTION petal_search_explorations_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO search_docs (kind, ref, id, owner, exploration, title, body, at)
    VALUES ('exploration', NEW.id, NEW.id, NEW.owner, NEW.id,
            left(coalesce(nullif(NEW.title, ''), NEW.question), 500), left(NEW.question, 8000), NEW.updated_at)
    ON CONFLICT (kind, ref) DO UPDATE SET owner = EXCLUDED.owner, title = EXCLUDED.title,
        body = EXCLUDED.body, at = EXCLUDED.at;
    -- Sign-in moves an anonymous owner's explorations to the person: their
    -- notes and annotations follow in the same statement.
    IF TG_OP = 'UPDATE' AND OLD.owner IS DISTINCT FROM NEW.owner THEN
        UPDATE search_docs SET owner = NEW.owner WHERE exploration = NEW.id;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER search_explorations AFTER INSERT OR UPDATE ON explorations
    FOR EACH ROW EXECUTE FUNCTION petal_search_explorations_trigger();

CREATE FUNCTION petal_search_notes_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_docs WHERE kind = 'note' AND ref = OLD.id;
        RETURN OLD;
    END IF;
    INSERT INTO search_docs (kind, ref, id, owner, exploration, title, body, at)
    SELECT 'note', NEW.id, NEW.id, e.owner, e.id, '', left(NEW.text, 8000), NEW.created_at
    FROM explorations e WHERE e.id = NEW.exploration
    ON CONFLICT (kind, ref) DO UPDATE SET body = EXCLUDED.body;
    RETURN NEW;
END $$;
CREATE TRIGGER search_notes AFTER INSERT OR UPDATE OR DELETE ON exploration_notes
    FOR EACH ROW EXECUTE FUNCTION petal_search_notes_trigger();

-- An annotation is its owner's: the exploration's owner in a project, else
-- the person's own. Its words are the claim's string values.
CREATE FUNCTION petal_search_annotations_trigger() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        DELETE FROM search_docs WHERE kind = 'annotation' AND ref = OLD.seq::text;
        RETURN OLD;
    END IF;
    INSERT INTO search_docs (kind, ref, id, owner, exploration, about, title, body, at)
    SELECT 'annotation', NEW.seq::text, NEW.id,
           coalesce((SELECT e.owner FROM explorations e WHERE e.id = NEW.exploration), NEW.owner),
           NEW.exploration, NEW.subject, left(NEW.subject, 500),
           left(coalesce((SELECT string_agg(v #>> '{}', ' ')
                          FROM jsonb_path_query(NEW.claim::jsonb, 'strict $.** ? (@.type() == "string")') v), ''), 8000),
           NEW.added_at
    ON CONFLICT (kind, ref) DO NOTHING;
    RETURN NEW;
END $$;
CREATE TRIGGER search_annotations AFTER INSERT OR DELETE ON annotations
    FOR EACH ROW EXECUTE FUNCTION petal_search_annotations_trigger();

-- What was kept before this migration.
SELECT petal_search_flower(id) FROM published_flowers;
SELECT petal_search_map(map) FROM (SELECT DISTINCT map FROM published_flowers) m;
UPDATE explorations SET owner = owner;
UPDATE exploration_notes SET text = text;
INSERT INTO search_docs (kind, ref, id, owner, exploration, about, title, body, at)
SELECT 'annotation', a.seq::text, a.id, coalesce(e.owner, a.owner), a.exploration, a.subject, left(a.subject, 500),
       left(coalesce((SELECT string_agg(v #>> '{}', ' ')
                      FROM jsonb_path_query(a.claim::jsonb, 'strict $.** ? (@.type() == "string")') v), ''), 8000),
       a.added_at
FROM annotations a LEFT JOIN explorations e ON e.id = a.exploration;
