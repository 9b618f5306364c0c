DROP TABLE IF EXISTS flower_corrections;
