package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/ports"
)

// RelationRepository is the relations index (migrations/000030_relations).
type RelationRepository struct {
	db *DB
	// keepFrom: a pair whose shared_accounts page would read more than this
	// (relation_shared_work) has its top shared accounts kept.
	keepFrom float64
}

var _ ports.RelationStore = (*RelationRepository)(nil)

// NewRelationRepository makes the store over db.
func NewRelationRepository(db *DB) *RelationRepository {
	return &RelationRepository{db: db, keepFrom: 10_000}
}

// KeepingSharedTopFrom is the store keeping the top shared accounts of the
// pairs whose page would read more than work: tests set it low, so small
// groups are kept too.
func (r *RelationRepository) KeepingSharedTopFrom(work float64) *RelationRepository {
	c := *r
	c.keepFrom = work
	return &c
}

// keptTop is how many of a heavy pair's shared accounts are kept: a page of
// the largest limit (200) and the one after, which says whether there is
// more.
const keptTop = 201

// rebuildLock serialises rebuilds across replicas: a rebuild rewrites the
// pair rows of its group with every other group, so two at once would
// deadlock on them. Rebuilds are rare; readers never take it.
const rebuildLock = 7_140_014_000

// Newest implements ports.RelationStore.
func (r *RelationRepository) Newest(ctx context.Context, group string) (string, time.Time, bool, error) {
	var sha string
	var at time.Time
	err := r.db.Pool.QueryRow(ctx, `SELECT snapshot_sha256, as_of FROM relation_groups WHERE group_id = $1`, group).Scan(&sha, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", time.Time{}, false, nil
	}
	if err != nil {
		return "", time.Time{}, false, fmt.Errorf("postgres: relations newest: %w", err)
	}
	return sha, at.UTC(), true, nil
}

// Offer implements ports.RelationStore: the reading is recorded, and if it
// is now the group's newest its members and pairs are rewritten, in one
// transaction, so a reader sees the group before or after, never between.
func (r *RelationRepository) Offer(ctx context.Context, rd ports.RelationReading) (bool, error) {
	rebuilt := false
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(rebuildLock)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO relation_readings (group_id, snapshot_sha256, as_of) VALUES ($1, $2, $3)
ON CONFLICT DO NOTHING`, rd.Group, rd.Snapshot, rd.AsOf); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM relation_offer_failures WHERE group_id = $1 AND snapshot_sha256 = $2`, rd.Group, rd.Snapshot); err != nil {
			return err
		}
		if !rd.Holdings {
			return nil
		}
		var curSHA string
		var curAt time.Time
		err := tx.QueryRow(ctx, `SELECT snapshot_sha256, as_of FROM relation_groups WHERE group_id = $1`, rd.Group).Scan(&curSHA, &curAt)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		case curSHA == rd.Snapshot:
			return nil
		case curAt.After(rd.AsOf) || (curAt.Equal(rd.AsOf) && curSHA < rd.Snapshot):
			return nil // the group's reading is newer
		}
		rebuilt = true
		return rebuildGroup(ctx, tx, rd, r.keepFrom)
	})
	if err != nil {
		return false, fmt.Errorf("postgres: relations offer %s: %w", rd.Group, err)
	}
	return rebuilt, nil
}

func rebuildGroup(ctx context.Context, tx pgx.Tx, rd ports.RelationReading, keepFrom float64) error {
	g := rd.Group
	if _, err := tx.Exec(ctx, `INSERT INTO relation_groups (group_id, snapshot_sha256, as_of, reader, kind, title, members, total)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8::numeric)
ON CONFLICT (group_id) DO UPDATE SET snapshot_sha256 = excluded.snapshot_sha256, as_of = excluded.as_of, reader = excluded.reader,
  kind = excluded.kind, title = excluded.title, members = excluded.members, total = excluded.total, rebuilt_at = now()`,
		g, rd.Snapshot, rd.AsOf, rd.Reader, relations.KindOf(rd.Reader), rd.Title, len(rd.Members), rd.Total); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM relation_shared_top WHERE a = $1 OR b = $1`, g); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM relation_pairs WHERE a = $1 OR b = $1`, g); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM relation_members WHERE group_id = $1`, g); err != nil {
		return err
	}
	rows := make([][]any, len(rd.Members))
	for i, m := range rd.Members {
		rows[i] = []any{g, m.Account, m.Weight, m.Share, m.Rank}
	}
	// weight goes in as text so numeric keeps it exactly as read.
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{"relation_members"}, []string{"group_id", "account", "weight", "share_e12", "rank"},
		pgx.CopyFromSlice(len(rows), func(i int) ([]any, error) { return rows[i], nil })); err != nil {
		return err
	}
	// The group's pairs with every other group, counted once here, with
	// both groups' sizes (this group's is new; the other's is current, and
	// is written again whenever that group is rebuilt).
	if _, err := tx.Exec(ctx, `INSERT INTO relation_pairs (a, b, shared, a_e12, b_e12, a_members, b_members, kept)
SELECT least($1, c.other), greatest($1, c.other), c.shared,
       CASE WHEN $1 < c.other THEN c.mine ELSE c.theirs END,
       CASE WHEN $1 < c.other THEN c.theirs ELSE c.mine END,
       CASE WHEN $1 < c.other THEN $2 ELSE g.members END,
       CASE WHEN $1 < c.other THEN g.members ELSE $2 END,
       CASE WHEN relation_shared_work(least($2, g.members), greatest($2, g.members), c.shared) > $3 THEN least(c.shared, $4) ELSE 0 END
FROM (SELECT o.group_id AS other, count(*) AS shared, sum(m.share_e12) AS mine, sum(o.share_e12) AS theirs
      FROM relation_members m JOIN relation_members o ON o.account = m.account AND o.group_id <> m.group_id
      WHERE m.group_id = $1
      GROUP BY o.group_id) c
JOIN relation_groups g ON g.group_id = c.other`, g, len(rd.Members), keepFrom, keptTop); err != nil {
		return err
	}
	// The kept pairs' top shared accounts: this group's (account, share)
	// hashed once against each kept partner's, by the index alone; weights
	// are read for the accounts kept.
	_, err := tx.Exec(ctx, `WITH mine AS MATERIALIZED (SELECT account, share_e12 FROM relation_members WHERE group_id = $1),
top AS (
  SELECT x.other, x.account, x.ms, x.os, x.smaller FROM (
    SELECT o.group_id AS other, o.account, mine.share_e12 AS ms, o.share_e12 AS os, least(mine.share_e12, o.share_e12) AS smaller, p.kept,
           row_number() OVER (PARTITION BY o.group_id ORDER BY least(mine.share_e12, o.share_e12) DESC, o.account) AS n
    FROM relation_pairs p
    JOIN relation_members o ON o.group_id = CASE WHEN p.a = $1 THEN p.b ELSE p.a END
    JOIN mine ON mine.account = o.account
    WHERE (p.a = $1 OR p.b = $1) AND p.kept > 0) x
  WHERE x.n <= x.kept)
INSERT INTO relation_shared_top (a, b, account, a_weight, a_e12, b_weight, b_e12, smaller_e12)
SELECT least($1, t.other), greatest($1, t.other), t.account,
       CASE WHEN $1 < t.other THEN mw.weight ELSE ow.weight END, CASE WHEN $1 < t.other THEN t.ms ELSE t.os END,
       CASE WHEN $1 < t.other THEN ow.weight ELSE mw.weight END, CASE WHEN $1 < t.other THEN t.os ELSE t.ms END,
       t.smaller
FROM top t
JOIN relation_members mw ON mw.group_id = $1 AND mw.account = t.account
JOIN relation_members ow ON ow.group_id = t.other AND ow.account = t.account`, g)
	return err
}

// Unoffered implements ports.RelationStore.
func (r *RelationRepository) Unoffered(ctx context.Context, limit int) ([]ports.ReadingRef, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT u.map, u.snapshot_sha256, coalesce(x.attempts, 0) FROM (
  SELECT DISTINCT f.map, f.snapshot_sha256 FROM published_flowers f
  WHERE f.status = 'ok' AND NOT EXISTS (SELECT 1 FROM relation_readings x WHERE x.group_id = f.map AND x.snapshot_sha256 = f.snapshot_sha256)
) u LEFT JOIN relation_offer_failures x ON x.group_id = u.map AND x.snapshot_sha256 = u.snapshot_sha256
WHERE x.next_at IS NULL OR x.next_at <= now()
ORDER BY coalesce(x.attempts, 0), u.map, u.snapshot_sha256
LIMIT $1`, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: relations unoffered: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.ReadingRef, error) {
		var x ports.ReadingRef
		return x, row.Scan(&x.Group, &x.Snapshot, &x.Attempts)
	})
}

// Failed implements ports.RelationStore. The delay runs from the database's
// clock, which Unoffered compares with, so replicas' clocks don't matter.
func (r *RelationRepository) Failed(ctx context.Context, ref ports.ReadingRef, retryIn time.Duration, reason string) error {
	if len(reason) > 500 {
		reason = strings.ToValidUTF8(reason[:500], "")
	}
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO relation_offer_failures (group_id, snapshot_sha256, attempts, next_at, last_error)
VALUES ($1, $2, 1, now() + $3::interval, $4)
ON CONFLICT (group_id, snapshot_sha256) DO UPDATE SET attempts = relation_offer_failures.attempts + 1,
  next_at = excluded.next_at, last_error = excluded.last_error`, ref.Group, ref.Snapshot, retryIn, reason)
	if err != nil {
		return fmt.Errorf("postgres: relations failed: %w", err)
	}
	return nil
}

const groupColumns = `group_id, snapshot_sha256, as_of, reader, kind, title, members, total::text`

func scanGroup(row pgx.Row) (ports.RelationGroup, error) {
	var g ports.RelationGroup
	err := row.Scan(&g.Group, &g.Snapshot, &g.AsOf, &g.Reader, &g.Kind, &g.Title, &g.Members, &g.Total)
	g.AsOf = g.AsOf.UTC()
	return g, err
}

// Group implements ports.RelationStore.
func (r *RelationRepository) Group(ctx context.Context, group string) (ports.RelationGroup, error) {
	g, err := scanGroup(r.db.Pool.QueryRow(ctx, `SELECT `+groupColumns+` FROM relation_groups WHERE group_id = $1`, group))
	if errors.Is(err, pgx.ErrNoRows) {
		return ports.RelationGroup{}, errs.New(errs.NotFound, "no group "+group, "")
	}
	if err != nil {
		return ports.RelationGroup{}, fmt.Errorf("postgres: relations group: %w", err)
	}
	return g, nil
}

// Groups implements ports.RelationStore.
func (r *RelationRepository) Groups(ctx context.Context, groups []string) ([]ports.RelationGroup, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT `+groupColumns+` FROM relation_groups WHERE group_id = ANY($1) ORDER BY members DESC, group_id`, groups)
	if err != nil {
		return nil, fmt.Errorf("postgres: relations groups: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.RelationGroup, error) { return scanGroup(row) })
}

func hiddenOrEmpty(h []string) []string {
	if h == nil {
		return []string{}
	}
	return h
}

// AccountGroups implements ports.RelationStore.
func (r *RelationRepository) AccountGroups(ctx context.Context, account string, q ports.RelationQuery) ([]ports.Membership, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT m.group_id, g.title, m.account, m.weight::text, m.share_e12, m.rank
FROM relation_members m JOIN relation_groups g ON g.group_id = m.group_id
WHERE m.account = $1 AND m.group_id <> ALL($2)
  AND (NOT $3 OR m.share_e12 < $4 OR (m.share_e12 = $4 AND m.group_id > $5))
ORDER BY m.share_e12 DESC, m.group_id
LIMIT $6`, account, hiddenOrEmpty(q.Hidden), q.After.Set, q.After.Value, q.After.Name, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: account groups: %w", err)
	}
	return pgx.CollectRows(rows, scanMembership)
}

func scanMembership(row pgx.CollectableRow) (ports.Membership, error) {
	var m ports.Membership
	return m, row.Scan(&m.Group, &m.Title, &m.Account, &m.Weight, &m.Share, &m.Rank)
}

// Related implements ports.RelationStore. A group is a in some of its pair
// rows and b in the others: each side is walked down its index in the order
// asked (count, jaccard_key or the related group's weight, then the related
// group) for a page at most, and the two merged, so a page reads about two
// pages of rows however many pairs the group has. Jaccard is ordered by
// jaccard_key, which orders the exact fractions (migrations/000037); the
// cursor's key is computed from its fraction the same way.
func (r *RelationRepository) Related(ctx context.Context, group string, by ports.RelatedOrder, q ports.RelationQuery) ([]ports.RelatedGroup, error) {
	aKey, bKey := "p.shared", "p.shared"
	after := `$3::bigint`
	switch by {
	case ports.RelatedByJaccard:
		aKey, bKey = "p.jaccard_key", "p.jaccard_key"
		after = `div($3::numeric * 1000000000000000000, $6)::bigint`
	case ports.RelatedByWeight:
		aKey, bKey = "p.b_e12", "p.a_e12"
	}
	args := []any{group, hiddenOrEmpty(q.Hidden), q.After.Value, q.After.Name, q.Limit}
	if by == ports.RelatedByJaccard {
		args[2] = q.After.Num
		args = append(args, max(q.After.Den, 1))
	}
	// side is one side's walk: the related group is other, the asked one me.
	side := func(me, other, key string) string {
		cursor := ""
		if q.After.Set { // key <= k bounds the walk; the rest filters the ties
			cursor = ` AND ` + key + ` <= (SELECT k FROM after) AND (` + key + ` < (SELECT k FROM after) OR p.` + other + ` > (SELECT name FROM after))`
		}
		return `(SELECT p.` + other + ` AS other, p.shared::bigint AS shared, ` + key + ` AS k, p.` + other + `_members::bigint AS members,
  p.` + me + `_members::bigint AS of, p.` + other + `_e12 AS w
FROM relation_pairs p
WHERE p.` + me + ` = $1 AND p.` + other + ` <> ALL($2)` + cursor + `
ORDER BY ` + key + ` DESC, p.` + other + `
LIMIT $5)`
	}
	rows, err := r.db.Pool.Query(ctx, `WITH after AS (SELECT `+after+` AS k, $4::text AS name),
r AS (`+side("a", "b", aKey)+`
UNION ALL
`+side("b", "a", bKey)+`)
SELECT r.other, g.title, r.shared, r.members, r.of, r.w
FROM r JOIN relation_groups g ON g.group_id = r.other
ORDER BY r.k DESC, r.other
LIMIT $5`, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: related groups: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.RelatedGroup, error) {
		var g ports.RelatedGroup
		return g, row.Scan(&g.Group, &g.Title, &g.Shared, &g.Members, &g.Of, &g.WeightInGroup)
	})
}

// Pairs implements ports.RelationStore.
func (r *RelationRepository) Pairs(ctx context.Context, minShared int64, kind string, q ports.RelationQuery) ([]ports.GroupPair, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT p.a, p.b, p.shared, ga.members, gb.members
FROM relation_pairs p JOIN relation_groups ga ON ga.group_id = p.a JOIN relation_groups gb ON gb.group_id = p.b
WHERE p.shared >= $1 AND p.a <> ALL($2) AND p.b <> ALL($2)
  AND ($3 = '' OR (ga.kind = $3 AND gb.kind = $3))
  AND (NOT $4 OR p.shared < $5 OR (p.shared = $5 AND (p.a > $6 OR (p.a = $6 AND p.b > $7))))
ORDER BY p.shared DESC, p.a, p.b
LIMIT $8`, minShared, hiddenOrEmpty(q.Hidden), kind, q.After.Set, q.After.Value, q.After.Name, q.After.Name2, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: relation pairs: %w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.GroupPair, error) {
		var p ports.GroupPair
		return p, row.Scan(&p.A, &p.B, &p.Shared, &p.MembersA, &p.MembersB)
	})
}

// Walk implements ports.RelationStore: one repeatable-read, read-only
// transaction, so a walk never sees a group half rebuilt.
func (r *RelationRepository) Walk(ctx context.Context, fn func(ports.RelationWalker) error) error {
	return pgx.BeginTxFunc(ctx, r.db.Pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		return fn(relationWalker{tx})
	})
}

type relationWalker struct{ tx pgx.Tx }

func (w relationWalker) GroupsOf(ctx context.Context, accounts []string, hidden []string, limit int) ([]ports.Membership, error) {
	rows, err := w.tx.Query(ctx, `SELECT m.group_id, '', m.account, m.weight::text, m.share_e12, m.rank FROM relation_members m
WHERE m.account = ANY($1) AND m.group_id <> ALL($2) LIMIT $3`, accounts, hiddenOrEmpty(hidden), limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: relations walk: %w", err)
	}
	return pgx.CollectRows(rows, scanMembership)
}

func (w relationWalker) MembersOf(ctx context.Context, groups []string, limit int) ([]ports.Membership, error) {
	rows, err := w.tx.Query(ctx, `SELECT m.group_id, '', m.account, m.weight::text, m.share_e12, m.rank FROM relation_members m
WHERE m.group_id = ANY($1) LIMIT $2`, groups, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: relations walk: %w", err)
	}
	return pgx.CollectRows(rows, scanMembership)
}

func (w relationWalker) Known(ctx context.Context, account string, hidden []string) (bool, error) {
	var ok bool
	err := w.tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM relation_members WHERE account = $1 AND group_id <> ALL($2))`,
		account, hiddenOrEmpty(hidden)).Scan(&ok)
	return ok, err
}
