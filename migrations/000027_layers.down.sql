DROP TABLE IF EXISTS dataset_versions;
DROP TABLE IF EXISTS layers;
