-- An exploration holds at most 100 links that work (explorations.MaxLiveLinks),
-- whoever made them: its owner's read and continue links and the continue
-- links takes give the person's agents' workers (docs/explorations.md). The
-- count is kept per exploration by a trigger on every way a link starts or
-- stops working, and a link goes in only by raising it under that row's lock,
-- so two links made at once can't both pass the cap (a count read in the
-- inserting statement could miss the other's commit). Its own table, so a
-- link doesn't rewrite the exploration's row (and its search document).
CREATE TABLE exploration_live_links (
    exploration text PRIMARY KEY REFERENCES explorations (id) ON DELETE CASCADE,
    live        integer NOT NULL CHECK (live >= 0)
);

-- A take's link used to outlive its job's report; it ends with the report now.
WITH ended AS (
    UPDATE agent_job_takes t SET ended = 'reported' FROM agent_jobs j
    WHERE j.id = t.job AND t.ended IS NULL AND j.status IN ('done', 'failed') RETURNING t.link_id)
UPDATE exploration_links SET revoked_at = now() WHERE id IN (SELECT link_id FROM ended) AND revoked_at IS NULL;

INSERT INTO exploration_live_links (exploration, live)
SELECT exploration, count(*) FROM exploration_links WHERE revoked_at IS NULL GROUP BY exploration;

-- SQLSTATE PX409 (petal's own) is the refusal petal answers 409 conflict
-- for. An exploration over the cap before this (old takes' links) takes no
-- new link until enough are revoked.
CREATE FUNCTION exploration_links_live() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        IF NEW.revoked_at IS NULL THEN
            INSERT INTO exploration_live_links AS c (exploration, live) VALUES (NEW.exploration, 1)
            ON CONFLICT (exploration) DO UPDATE SET live = c.live + 1 WHERE c.live < 100;
            IF NOT FOUND THEN
                RAISE EXCEPTION 'exploration % already has 100 links that work', NEW.exploration USING ERRCODE = 'PX409';
            END IF;
        END IF;
        RETURN NEW;
    END IF;
    IF (TG_OP = 'DELETE' AND OLD.revoked_at IS NULL) OR (TG_OP = 'UPDATE' AND OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL) THEN
        UPDATE exploration_live_links SET live = greatest(live - 1, 0) WHERE exploration = OLD.exploration;
    END IF;
    RETURN NULL;
END $$;

CREATE TRIGGER exploration_links_live_insert BEFORE INSERT ON exploration_links
    FOR EACH ROW EXECUTE FUNCTION exploration_links_live();
CREATE TRIGGER exploration_links_live_end AFTER UPDATE OF revoked_at OR DELETE ON exploration_links
    FOR EACH ROW EXECUTE FUNCTION exploration_links_live();
