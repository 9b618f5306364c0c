DROP TABLE IF EXISTS chat_quotes;
