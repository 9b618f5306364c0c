DROP TABLE specs;
