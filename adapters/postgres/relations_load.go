package postgres

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/relations"
	"github.com/petal-near/petal/ports"
)

// Load fills an empty relations index with one reading per group at once:
// the rows Offer would leave after offering each reading in turn, written
// set-wise (members by one COPY, every pair row by one join) instead of one
// group's rebuild at a time, which at 2,000,000 memberships takes most of an
// hour. It is how the relations benchmark loads its generated map; Offer
// stays the write path of everything else. The readings are pulled one at a
// time, so the caller need not hold them all. A group named twice, or an
// index that isn't empty, is refused (Offer would have kept only the newest
// reading, or rebuilt against the groups already there).
func (r *RelationRepository) Load(ctx context.Context, readings iter.Seq[ports.RelationReading]) error {
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(rebuildLock)); err != nil {
			return err
		}
		var used bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM relation_readings)`).Scan(&used); err != nil {
			return err
		}
		if used {
			return errors.New("the index is not empty")
		}
		var groups, readingRows [][]any
		seen := map[string]bool{}
		next, stop := iter.Pull(readings)
		defer stop()
		var failed error
		// Members stream from the readings as COPY asks for rows; each
		// reading's group and reading rows are kept for the COPYs after.
		src := &memberRows{next: func() (ports.RelationReading, bool) {
			for {
				rd, ok := next()
				if !ok {
					return rd, false
				}
				if seen[rd.Group] {
					failed = fmt.Errorf("group %s named twice", rd.Group)
					return rd, false
				}
				seen[rd.Group] = true
				readingRows = append(readingRows, []any{rd.Group, rd.Snapshot, rd.AsOf})
				if !rd.Holdings {
					continue
				}
				groups = append(groups, []any{rd.Group, rd.Snapshot, rd.AsOf, rd.Reader, relations.KindOf(rd.Reader), rd.Title, len(rd.Members), rd.Total})
				return rd, true
			}
		}}
		// relation_members references relation_groups (not deferrable), and
		// a group's row is known only once its reading has streamed past: the
		// members wait in a temporary table until the groups are in.
		if _, err := tx.Exec(ctx, `CREATE TEMP TABLE load_members (LIKE relation_members) ON COMMIT DROP`); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"load_members"}, []string{"group_id", "account", "weight", "share_e12", "rank"}, src); err != nil {
			return err
		}
		if failed != nil {
			return failed
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"relation_readings"}, []string{"group_id", "snapshot_sha256", "as_of"}, pgx.CopyFromRows(readingRows)); err != nil {
			return err
		}
		if _, err := tx.CopyFrom(ctx, pgx.Identifier{"relation_groups"}, []string{"group_id", "snapshot_sha256", "as_of", "reader", "kind", "title", "members", "total"}, pgx.CopyFromRows(groups)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO relation_members SELECT * FROM load_members`); err != nil {
			return err
		}
		// Every pair row from one join: what each group's rebuild counts
		// for itself against the groups before it, for all groups at once.
		if _, err := tx.Exec(ctx, `SET LOCAL work_mem = '256MB'`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO relation_pairs (a, b, shared, a_e12, b_e12, a_members, b_members, kept)
SELECT c.a, c.b, c.shared, c.a_e12, c.b_e12, ga.members, gb.members,
       CASE WHEN relation_shared_work(least(ga.members, gb.members), greatest(ga.members, gb.members), c.shared) > $1
            THEN least(c.shared, $2) ELSE 0 END
FROM (SELECT x.group_id AS a, y.group_id AS b, count(*) AS shared, sum(x.share_e12) AS a_e12, sum(y.share_e12) AS b_e12
      FROM relation_members x JOIN relation_members y ON y.account = x.account AND x.group_id < y.group_id
      GROUP BY x.group_id, y.group_id) c
JOIN relation_groups ga ON ga.group_id = c.a JOIN relation_groups gb ON gb.group_id = c.b
ORDER BY c.a, c.b`, r.keepFrom, keptTop); err != nil { // in key order: the indexes on a fill page by page
			return err
		}
		// The kept pairs' top shared accounts, from one join of the members
		// of the groups in any kept pair.
		_, err := tx.Exec(ctx, `WITH kept AS (SELECT DISTINCT g FROM relation_pairs, LATERAL (VALUES (a), (b)) v (g) WHERE kept > 0),
m AS (SELECT * FROM relation_members WHERE group_id IN (SELECT g FROM kept))
INSERT INTO relation_shared_top (a, b, account, a_weight, a_e12, b_weight, b_e12, smaller_e12)
SELECT z.a, z.b, z.account, z.aw, z.ae, z.bw, z.be, z.smaller
FROM (SELECT p.a, p.b, x.account, x.weight AS aw, x.share_e12 AS ae, y.weight AS bw, y.share_e12 AS be,
             least(x.share_e12, y.share_e12) AS smaller, p.kept,
             row_number() OVER (PARTITION BY p.a, p.b ORDER BY least(x.share_e12, y.share_e12) DESC, x.account) AS n
      FROM m x JOIN m y ON y.account = x.account AND x.group_id < y.group_id
      JOIN relation_pairs p ON p.a = x.group_id AND p.b = y.group_id AND p.kept > 0) z
WHERE z.n <= z.kept`)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: relations load: %w", err)
	}
	return nil
}

// memberRows is a pgx.CopyFromSource over the members of readings pulled
// one at a time.
type memberRows struct {
	next func() (ports.RelationReading, bool)
	rd   ports.RelationReading
	i    int
	row  []any
}

func (m *memberRows) Next() bool {
	for m.i >= len(m.rd.Members) {
		rd, ok := m.next()
		if !ok {
			return false
		}
		m.rd, m.i = rd, 0
	}
	mb := m.rd.Members[m.i]
	m.i++
	// weight goes in as text so numeric keeps it exactly as read.
	m.row = []any{m.rd.Group, mb.Account, mb.Weight, mb.Share, mb.Rank}
	return true
}

func (m *memberRows) Values() ([]any, error) { return m.row, nil }
func (m *memberRows) Err() error             { return nil }
