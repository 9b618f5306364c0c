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
	pair, out, err := r.sharedKept(ctx, lo, hi, a, q)
	if err != nil {
		return 0, nil, fmt.Errorf("postgres: shared accounts: %w", err)
	}
	if pair.count == 0 || (pair.kept > 0 && (len(out) >= q.Limit || pair.kept >= pair.count)) {
		return pair.count, out, nil
	}
	if plan := planShared(lo, hi, pair, q.Limit); plan.start >= plan.size {
		// The whole smaller group is read (threshold 0): one statement,
		// which counts too, so one snapshot without a transaction. (Were the
		// sizes changed since, the answer is still whole: only the choice
		// of join was made on them.)
		rows, err := r.db.Pool.Query(ctx, `SELECT pr.shared, x.* FROM (SELECT shared FROM relation_pairs WHERE a = $8 AND b = $9) pr
LEFT JOIN LATERAL (`+sharedPageSQL(plan.join)+`) x ON true
ORDER BY x.m DESC, x.account`, plan.small, plan.large, 0, q.After.Set, q.After.Value, q.After.Name, q.Limit, lo, hi)
		if err != nil {
			return 0, nil, fmt.Errorf("postgres: shared accounts: %w", err)
		}
		count, out, err := collectCountedShared(rows, plan.small == a)
		if err != nil {
			return 0, nil, fmt.Errorf("postgres: shared accounts: %w", err)
		}
		return count, out, nil
	}
	var count int64
	err = pgx.BeginTxFunc(ctx, r.db.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var p sharedPair
		// A page is a few milliseconds of work: parallel workers would cost
		// more to start than they save, and take the other core from
		// another request (set_config's true: for this transaction only).
		err := tx.QueryRow(ctx, `SELECT shared, a_members, b_members, set_config('max_parallel_workers_per_gather', '0', true)
FROM relation_pairs WHERE a = $1 AND b = $2`, lo, hi).Scan(&p.count, &p.sizeLo, &p.sizeHi, nil)
		if errors.Is(err, pgx.ErrNoRows) {
			count, out = 0, nil
			return nil
		}
		if err != nil {
			return err
		}
		count = p.count
		plan := planShared(lo, hi, p, q.Limit)
		for reach := plan.start; ; reach *= 2 {
			var t int64 // the threshold: the share at reach in the smaller group, 0 past its end
			if reach < plan.size {
				if err := tx.QueryRow(ctx, `SELECT share_e12 FROM relation_members WHERE group_id = $1 ORDER BY share_e12 DESC OFFSET $2 LIMIT 1`,
					plan.small, reach).Scan(&t); err != nil {
					return err
				}
			}
			rows, err := tx.Query(ctx, sharedPageSQL(plan.join), plan.small, plan.large, t, q.After.Set, q.After.Value, q.After.Name, q.Limit)
			if err != nil {
				return err
			}
			out, err = collectShared(rows, plan.small == a)
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

// sharedPair is a pair row: its count, kept count and both groups' sizes.
type sharedPair struct{ count, kept, sizeLo, sizeHi int64 }

// sharedPlan is how a page is read from the members: the smaller group and
// the larger, the join of the two, and how deep into the smaller one to
// start (its size or more: all of it).
type sharedPlan struct {
	small, large string
	size, start  int64
	join         string
}

func planShared(lo, hi string, p sharedPair, limit int) sharedPlan {
	plan := sharedPlan{small: lo, large: hi, size: p.sizeLo}
	if p.sizeHi < p.sizeLo {
		plan.small, plan.large, plan.size = hi, lo, p.sizeHi
	}
	// Both groups walked down to t and joined, unless the larger is so
	// much larger that walking it would read more than looking each of
	// the smaller one's accounts up in it (by its key).
	plan.join = `relation_members s JOIN relation_members l ON l.group_id = $2 AND l.account = s.account`
	if max(p.sizeLo, p.sizeHi) > lookupRatio*plan.size {
		plan.join = `relation_members s CROSS JOIN LATERAL (
    SELECT share_e12 FROM relation_members WHERE group_id = $2 AND account = s.account OFFSET 0) l`
		// A group ten times larger spreads its weight ten times thinner,
		// so the smaller share is nearly always the larger group's, and a
		// threshold on the smaller group's shares admits almost nothing:
		// it would look its accounts up again at every lowering. All of
		// them at once, in one statement.
		plan.start = plan.size
		return plan
	}
	// Where to start: were the two shares independent, reading the top r
	// of the smaller group would find about count·(r/size)² accounts
	// with both shares over the threshold; start where that is twice a
	// page, then double. (Few shared accounts: all of them at once.)
	plan.start = max(int64(float64(plan.size)*math.Sqrt(2*float64(limit+1)/float64(max(p.count, 1)))), int64(limit))
	return plan
}

// sharedPageSQL is a page of the accounts of $1 (the smaller group) and $2
// with both shares at least $3, after the cursor ($4–$6), $7 at most, by the
// smaller share: (account, weight and share in $1, in $2, the smaller).
func sharedPageSQL(join string) string {
	return `WITH page AS (
  SELECT s.account, s.share_e12 AS ss, l.share_e12 AS ls, least(s.share_e12, l.share_e12) AS m
  FROM ` + join + `
  WHERE s.group_id = $1 AND s.share_e12 >= $3 AND l.share_e12 >= $3
    AND (NOT $4 OR least(s.share_e12, l.share_e12) < $5 OR (least(s.share_e12, l.share_e12) = $5 AND s.account > $6))
  ORDER BY m DESC, s.account
  LIMIT $7)
SELECT p.account, ws.weight::text AS w1, p.ss, wl.weight::text AS w2, p.ls, p.m
FROM page p
JOIN relation_members ws ON ws.group_id = $1 AND ws.account = p.account
JOIN relation_members wl ON wl.group_id = $2 AND wl.account = p.account
ORDER BY p.m DESC, p.account`
}

// collectCountedShared reads a count, then collectShared's columns (null
// when none are shared after the cursor); count 0: no pair.
func collectCountedShared(rows pgx.Rows, aFirst bool) (int64, []ports.SharedMember, error) {
	defer rows.Close()
	var count int64
	var out []ports.SharedMember
	for rows.Next() {
		var account, w1, w2 *string
		var s1, s2, smaller *int64
		if err := rows.Scan(&count, &account, &w1, &s1, &w2, &s2, &smaller); err != nil {
			return 0, nil, err
		}
		if account == nil {
			continue
		}
		m := ports.SharedMember{Account: *account, WeightA: *w1, ShareA: *s1, WeightB: *w2, ShareB: *s2, SmallerShare: *smaller}
		if !aFirst {
			m.WeightA, m.ShareA, m.WeightB, m.ShareB = m.WeightB, m.ShareB, m.WeightA, m.ShareA
		}
		out = append(out, m)
	}
	return count, out, rows.Err()
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

// sharedKept is the pair row, and when the pair is kept, its kept accounts
// after the cursor (a page at most); count 0: no pair.
func (r *RelationRepository) sharedKept(ctx context.Context, lo, hi, a string, q ports.RelationQuery) (sharedPair, []ports.SharedMember, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT p.shared, p.kept, p.a_members, p.b_members,
       t.account, t.a_weight::text, t.a_e12, t.b_weight::text, t.b_e12, t.smaller_e12
FROM relation_pairs p LEFT JOIN LATERAL (
  SELECT s.* FROM relation_shared_top s
  WHERE s.a = p.a AND s.b = p.b AND p.kept > 0
    AND (NOT $3 OR s.smaller_e12 < $4 OR (s.smaller_e12 = $4 AND s.account > $5))
  ORDER BY s.smaller_e12 DESC, s.account
  LIMIT $6) t ON true
WHERE p.a = $1 AND p.b = $2
ORDER BY t.smaller_e12 DESC, t.account`, lo, hi, q.After.Set, q.After.Value, q.After.Name, q.Limit)
	if err != nil {
		return sharedPair{}, nil, err
	}
	defer rows.Close()
	var p sharedPair
	var out []ports.SharedMember
	for rows.Next() {
		var account, wLo, wHi *string
		var sLo, sHi, smaller *int64
		if err := rows.Scan(&p.count, &p.kept, &p.sizeLo, &p.sizeHi, &account, &wLo, &sLo, &wHi, &sHi, &smaller); err != nil {
			return sharedPair{}, nil, err
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
	return p, out, rows.Err()
}
