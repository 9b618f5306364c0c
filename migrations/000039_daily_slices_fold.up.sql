-- The holds on a day's slices, by slice: folding a past day's slices into
-- its row (adapters/postgres/ledger_day_fold.go) clears them, and deleting a
-- slice checks the foreign key here instead of scanning every hold. Partial:
-- only the days not folded yet have holds in it.
CREATE INDEX credit_holds_on_slices ON credit_holds (account_id, slice) WHERE slice IS NOT NULL;
