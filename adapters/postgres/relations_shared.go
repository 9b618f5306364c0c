package postgres

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// lookupRatio: a key lookup costs about what reading this many index entries
// in order does.
const lookupRatio = 10

// Shared implements ports.RelationStore: the count from the pair row and the
// page in one read-only snapshot.
//
// The page is the top of the shared accounts by the smaller of their two
// shares. An account whose smaller share is at least t has both shares at
// least t, so each page is read from the members of both groups down to a
// threshold t (two index-only walks of relation_members_by_share, joined on
// the account), and t is lowered only while fewer than a page were found.
// Two large groups sharing thousands of accounts are never joined whole for
// a page, and weights are read for the page's accounts alone. For the pairs
// where even that is heavy (relation_shared_work over keepFrom), the first
// pages are kept (relation_shared_top, migrations/000041) and read by index.
func (r *RelationRepository) Shared(ctx context.Context, a, b string, q ports.RelationQuery) (int64, []ports.SharedMember, error) {
	lo, hi := min(a, b), max(a, b)
	// A kept pair's page is one statement, so one snapshot: its pair row
	// and its kept accounts after the cursor.
	count, kept, out, err := r.sharedKept(ctx, lo, hi, a, q)
	if err != nil {
		return 0, nil, fmt.Errorf("postgres: shared accounts: %w", err)
	}
	if count == 0 || (kept > 0 && (len(out) >= q.Limit || kept >= count)) {
		return count, out, nil
	}
	err = pgx.BeginTxFunc(ctx, r.db.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var sizeLo, sizeHi int64
		// A page is a few milliseconds of work: parallel workers would cost
		// more to start than they save, and take the other core from
		// another request (set_config's true: for this transaction only).
		err := tx.QueryRow(ctx, `SELECT shared, a_members, b_members, set_config('max_parallel_workers_per_gather', '0', true)
FROM relation_pairs WHERE a = $1 AND b = $2`, lo, hi).Scan(&count, &sizeLo, &sizeHi, nil)
		if errors.Is(err, pgx.ErrNoRows) {
			count, out = 0, nil
			return nil
		}
		if err != nil {
			return err
		}
		small, large, size := lo, hi, sizeLo
		if sizeHi < sizeLo {
			small, large, size = hi, lo, sizeHi
		}
		// Both groups walked down to t and joined, unless the larger is so
		// much larger that walking it would read more than looking each of
		// the smaller one's accounts up in it (by its key).
		join := `relation_members s JOIN relation_members l ON l.group_id = $2 AND l.account = s.account`
		if max(sizeLo, sizeHi) > lookupRatio*size {
			join = `relation_members s CROSS JOIN LATERAL (
    SELECT share_e12 FROM relation_members WHERE group_id = $2 AND account = s.account OFFSET 0) l`
		}
		// Where to start: were the two shares independent, reading the top r
		// of the smaller group would find about count·(r/size)² accounts
		// with both shares over the threshold; start where that is twice a
		// page, then double. (Few shared accounts: all of them at once.)
		start := int64(float64(size) * math.Sqrt(2*float64(q.Limit+1)/float64(max(count, 1))))
		for reach := max(start, int64(q.Limit)); ; reach *= 2 {
			var t int64 // the threshold: the share at reach in the smaller group, 0 past its end
			if reach < size {
				if err := tx.QueryRow(ctx, `SELECT share_e12 FROM relation_members WHERE group_id = $1 ORDER BY share_e12 DESC OFFSET $2 LIMIT 1`,
					small, reach).Scan(&t); err != nil {
					return err
				}
			}
			rows, err := tx.Query(ctx, `WITH page AS (
  SELECT s.account, s.share_e12 AS ss, l.share_e12 AS ls, least(s.share_e12, l.share_e12) AS m
  FROM `+join+`
  WHERE s.group_id = $1 AND s.share_e12 >= $3 AND l.share_e12 >= $3
    AND (NOT $4 OR least(s.share_e12, l.share_e12) < $5 OR (least(s.share_e12, l.share_e12) = $5 AND s.account > $6))
  ORDER BY m DESC, s.account
  LIMIT $7)
SELECT p.account, ws.weight::text, p.ss, wl.weight::text, p.ls, p.m
FROM page p
JOIN relation_members ws ON ws.group_id = $1 AND ws.account = p.account
JOIN relation_members wl ON wl.group_id = $2 AND wl.account = p.account
ORDER BY p.m DESC, p.account`, small, large, t, q.After.Set, q.After.Value, q.After.Name, q.Limit)
			if err != nil {
				return err
			}
			out, err = collectShared(rows, small == a)
			if err != nil || len(out) >= q.Limit || t == 0 {
				return err
			}
		}
	})
	if err != nil {
		return 0, nil, fmt.Errorf("postgres: shared accounts: %w", err)
	}
	return count, out, nil
}

// collectShared reads rows of (account, weight, share) of one group, then the
// other's, and the smaller share; aFirst says the first group is group_a.
func collectShared(rows pgx.Rows, aFirst bool) ([]ports.SharedMember, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.SharedMember, error) {
		var m ports.SharedMember
		if aFirst {
			return m, row.Scan(&m.Account, &m.WeightA, &m.ShareA, &m.WeightB, &m.ShareB, &m.SmallerShare)
		}
		return m, row.Scan(&m.Account, &m.WeightB, &m.ShareB, &m.WeightA, &m.ShareA, &m.SmallerShare)
	})
}

// sharedKept is the pair's count and kept count, and when it is kept, the
// kept accounts after the cursor (a page at most); count 0: no pair.
func (r *RelationRepository) sharedKept(ctx context.Context, lo, hi, a string, q ports.RelationQuery) (count, kept int64, out []ports.SharedMember, err error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT p.shared, p.kept, t.account, t.a_weight::text, t.a_e12, t.b_weight::text, t.b_e12, t.smaller_e12
FROM relation_pairs p LEFT JOIN LATERAL (
  SELECT s.* FROM relation_shared_top s
  WHERE s.a = p.a AND s.b = p.b AND p.kept > 0
    AND (NOT $3 OR s.smaller_e12 < $4 OR (s.smaller_e12 = $4 AND s.account > $5))
  ORDER BY s.smaller_e12 DESC, s.account
  LIMIT $6) t ON true
WHERE p.a = $1 AND p.b = $2
ORDER BY t.smaller_e12 DESC, t.account`, lo, hi, q.After.Set, q.After.Value, q.After.Name, q.Limit)
	if err != nil {
		return 0, 0, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var account, wLo, wHi *string
		var sLo, sHi, smaller *int64
		if err := rows.Scan(&count, &kept, &account, &wLo, &sLo, &wHi, &sHi, &smaller); err != nil {
			return 0, 0, nil, err
		}
		if account == nil {
			continue // a pair with nothing kept after the cursor
		}
		m := ports.SharedMember{Account: *account, WeightA: *wLo, ShareA: *sLo, WeightB: *wHi, ShareB: *sHi, SmallerShare: *smaller}
		if lo != a {
			m.WeightA, m.ShareA, m.WeightB, m.ShareB = m.WeightB, m.ShareB, m.WeightA, m.ShareA
		}
		out = append(out, m)
	}
	return count, kept, out, rows.Err()
}
