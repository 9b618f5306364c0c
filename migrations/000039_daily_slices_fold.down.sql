DROP INDEX IF EXISTS credit_holds_on_slices;
