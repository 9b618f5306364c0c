DROP TABLE IF EXISTS relation_pairs;
DROP TABLE IF EXISTS relation_members;
DROP TABLE IF EXISTS relation_groups;
DROP TABLE IF EXISTS relation_readings;
