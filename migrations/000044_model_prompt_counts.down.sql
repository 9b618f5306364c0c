DROP TABLE model_bound_distrust;
DROP TABLE model_prompt_heads;
DROP TABLE model_prompt_prefixes;
