DROP TABLE relation_offer_failures;
