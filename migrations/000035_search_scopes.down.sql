DROP INDEX search_docs_tsv;
ALTER TABLE search_docs DROP COLUMN tsv;
ALTER TABLE search_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('simple', title || ' ' || translate(title, '._-:/@', '      ')), 'A') ||
    setweight(to_tsvector('simple', body || ' ' || translate(body, '._-:/@', '      ')), 'B')) STORED;
CREATE INDEX search_docs_tsv ON search_docs USING gin (tsv);
