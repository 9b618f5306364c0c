DROP TRIGGER IF EXISTS exploration_links_live_end ON exploration_links;
DROP TRIGGER IF EXISTS exploration_links_live_insert ON exploration_links;
DROP FUNCTION IF EXISTS exploration_links_live();
DROP TABLE IF EXISTS exploration_live_links;
