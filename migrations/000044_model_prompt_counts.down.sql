DROP TABLE IF EXISTS model_bound_distrust;
DROP TABLE IF EXISTS model_prompt_heads;
DROP TABLE IF EXISTS model_prompt_prefixes;
