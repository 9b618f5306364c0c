DROP TABLE dao_directory;
DROP TABLE dao_directory_reads;
