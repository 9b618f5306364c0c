package postgres

import (
	"context"
	"fmt"
	"time"
)

// The windows of rate_limits (migration 14), as ShareLimiter keeps them for
// a key that needs more than its share: giving calls back, and deleting the
// windows that have closed (the rate_limit_windows job).

// maxGiveBack caps the keys one give-back statement carries.
const maxGiveBack = 1000

// giveBackSQL returns unspent calls to their windows (only the windows they
// were taken from), locking rows in key order as the allow statement does.
const giveBackSQL = `WITH back AS (
	SELECT * FROM unnest($1::text[], $2::timestamptz[], $3::int[]) AS b(key, window_end, n)
), locked AS (
	SELECT r.key FROM rate_limits r JOIN back USING (key) ORDER BY r.key FOR UPDATE OF r
)
UPDATE rate_limits r SET count = greatest(r.count - back.n, 0)
FROM back JOIN locked USING (key)
WHERE r.key = back.key AND r.window_end = back.window_end`

// giveBackWindows returns ns[i] calls to keys[i]'s window ending ends[i], at
// most maxGiveBack keys a statement, each statement locking its rows in
// key order (giveBackSQL), so processes giving back overlapping keys at
// once never deadlock. It says how many calls went back.
func giveBackWindows(ctx context.Context, db *DB, keys []string, ends []time.Time, ns []int32) (int, error) {
	given := 0
	for start := 0; start < len(keys); start += maxGiveBack {
		stop := min(start+maxGiveBack, len(keys))
		if _, err := db.Pool.Exec(ctx, giveBackSQL, keys[start:stop], ends[start:stop], ns[start:stop]); err != nil {
			return given, fmt.Errorf("rate limit: give back: %w", err)
		}
		for _, n := range ns[start:stop] {
			given += int(n)
		}
	}
	return given, nil
}

// SweepClosedWindows deletes the rate limits' windows (rate_limits) that
// closed before now, 5,000 rows per
// statement so no lock is held long, and says how many went.
func SweepClosedWindows(ctx context.Context, db *DB, now time.Time) (int64, error) {
	var total int64
	for {
		tag, err := db.Pool.Exec(ctx, `DELETE FROM rate_limits WHERE ctid = ANY (ARRAY(
			SELECT ctid FROM rate_limits WHERE window_end <= $1 LIMIT 5000))`, now)
		if err != nil {
			return total, err
		}
		total += tag.RowsAffected()
		if tag.RowsAffected() < 5000 {
			return total, nil
		}
	}
}
