-- Two flowers of one map kept at once (two replicas' publish_flower, the map
-- sync's keeps) each rebuilt the map's search row in their own transaction:
-- the second INSERT waited for the first and then failed on the primary key,
-- and the whole keep with it. The map's row is now upserted; a row written
-- from a statement that began before the other keep committed misses that
-- flower's words until the map's next change.
CREATE OR REPLACE FUNCTION petal_search_map(m text) RETURNS void LANGUAGE plpgsql AS $$
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
    HAVING count(*) > 0
    ON CONFLICT (kind, ref) DO UPDATE SET id = EXCLUDED.id, owner = EXCLUDED.owner, map = EXCLUDED.map,
        title = EXCLUDED.title, body = EXCLUDED.body, at = EXCLUDED.at;
END $$;
