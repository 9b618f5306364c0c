DROP TABLE IF EXISTS annotations;
