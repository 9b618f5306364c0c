DROP TABLE map_refresh_days;
DROP TABLE map_refresh_targets;
DROP TABLE map_readings;
DROP TABLE map_views;
