DROP TABLE IF EXISTS publish_prepared;
DROP TABLE IF EXISTS published_flowers;
