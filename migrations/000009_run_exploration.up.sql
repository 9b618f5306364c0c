-- The exploration a run keeps its flowers in: made at the run's first flower,
-- each new flower a step (door agent).
ALTER TABLE runs ADD COLUMN exploration text;
