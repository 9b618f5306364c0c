-- Fold the slices back into their day's row, then drop them.
UPDATE credit_accounts a SET
    spent_micros = a.spent_micros + s.spent,
    held_micros = a.held_micros + s.held,
    limit_micros = coalesce(s.cap, a.limit_micros)
FROM (SELECT account_id, sum(spent_micros)::bigint AS spent, sum(held_micros)::bigint AS held,
             max(cap_micros) FILTER (WHERE cap_micros >= 0) AS cap
      FROM credit_daily_slices GROUP BY account_id) s
WHERE a.id = s.account_id;
ALTER TABLE credit_holds DROP CONSTRAINT credit_holds_slice_fkey;
ALTER TABLE credit_holds DROP COLUMN slice;
DROP TABLE credit_daily_slices;
