DROP TABLE map_marks;
