ALTER TABLE credit_holds DROP COLUMN IF EXISTS swept_at;
