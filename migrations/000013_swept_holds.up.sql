-- When a sweep released a hold (its process taken for dead), and not its own
-- process: a late settle by that process still charges such a hold, so the
-- ledger never loses a charge.
ALTER TABLE credit_holds ADD COLUMN swept_at timestamptz;
