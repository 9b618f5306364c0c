DROP TABLE IF EXISTS intent_topups;
