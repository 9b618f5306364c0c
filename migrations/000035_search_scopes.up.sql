-- search_docs' tsvector also holds one lexeme naming whose row it is:
-- '# public' for the map's rows, '# <md5 of the owner>' for a person's. A
-- search adds ('# public' | '# <its caller's>') to its query, so the GIN index
-- itself leaves out other people's rows instead of the heap being read for
-- every match and filtered (100,000 notes made a visitor's search read each
-- note that matched). The query keeps its owner condition as well. A parsed
-- word never holds a space, so no text (a note's, a query's) makes these.
DROP INDEX search_docs_tsv;
ALTER TABLE search_docs DROP COLUMN tsv;
ALTER TABLE search_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', title || ' ' || translate(title, '._-:/@', '      ')), 'A') ||
    setweight(to_tsvector('simple', body || ' ' || translate(body, '._-:/@', '      ')), 'B') ||
    array_to_tsvector(ARRAY[CASE WHEN owner IS NULL THEN '# public' ELSE '# ' || md5(owner) END])) STORED;
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
