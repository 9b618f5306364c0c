package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// MapRefreshRepository is ports.MapRefresh on migration 46's tables
// (map_views, map_readings, map_refresh_targets, map_refresh_days).
type MapRefreshRepository struct{ db *DB }

var _ ports.MapRefresh = (*MapRefreshRepository)(nil)

// NewMapRefreshRepository makes the map_refresh job's store over db.
func NewMapRefreshRepository(db *DB) *MapRefreshRepository { return &MapRefreshRepository{db: db} }

// Viewed implements ports.MapRefresh: one upsert, no read.
func (r *MapRefreshRepository) Viewed(ctx context.Context, mapID string, at time.Time) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO map_views (map, views, last_viewed) VALUES ($1, 1, $2)
ON CONFLICT (map) DO UPDATE SET views = map_views.views + 1, last_viewed = GREATEST(map_views.last_viewed, EXCLUDED.last_viewed)`, mapID, at)
	if err != nil {
		return fmt.Errorf("postgres: count a map's view: %w", err)
	}
	return nil
}

// MostViewed implements ports.MapRefresh.
func (r *MapRefreshRepository) MostViewed(ctx context.Context, ids []string, limit int) ([]string, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT v.map FROM map_views v WHERE v.map = ANY($1::text[]) AND v.views > 0
ORDER BY v.views DESC, v.last_viewed DESC, v.map LIMIT $2`, ids, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: most viewed maps: %w", err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("postgres: most viewed maps: %w", err)
	}
	return out, nil
}

// States implements ports.MapRefresh.
func (r *MapRefreshRepository) States(ctx context.Context, keys []string) (map[string]ports.RefreshState, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT target_key, mark, failures, next_try FROM map_refresh_targets WHERE target_key = ANY($1::text[])`, keys)
	if err != nil {
		return nil, fmt.Errorf("postgres: refresh states: %w", err)
	}
	out := map[string]ports.RefreshState{}
	var s ports.RefreshState
	_, err = pgx.ForEachRow(rows, []any{&s.TargetKey, &s.Mark, &s.Failures, &s.NextTry}, func() error {
		out[s.TargetKey] = s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: refresh states: %w", err)
	}
	return out, nil
}

// Spend implements ports.MapRefresh: one statement, so two replicas spending
// the last read at once can't both have it (the row's lock orders them and
// the second finds reads at perDay).
func (r *MapRefreshRepository) Spend(ctx context.Context, day time.Time, perDay int) (bool, error) {
	if perDay <= 0 {
		return false, nil
	}
	tag, err := r.db.Pool.Exec(ctx, `INSERT INTO map_refresh_days (day, reads) VALUES ($1::date, 1)
ON CONFLICT (day) DO UPDATE SET reads = map_refresh_days.reads + 1 WHERE map_refresh_days.reads < $2`, day.UTC().Format(time.DateOnly), perDay)
	if err != nil {
		return false, fmt.Errorf("postgres: spend a refresh read: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Spent implements ports.MapRefresh.
func (r *MapRefreshRepository) Spent(ctx context.Context, day time.Time) (int, error) {
	var n int
	err := r.db.Pool.QueryRow(ctx, `SELECT COALESCE((SELECT reads FROM map_refresh_days WHERE day = $1::date), 0)`, day.UTC().Format(time.DateOnly)).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: refresh reads spent: %w", err)
	}
	return n, nil
}

// Kept implements ports.MapRefresh: the reading, its target's state and the
// NOTIFY in one transaction (the NOTIFY is sent at commit).
func (r *MapRefreshRepository) Kept(ctx context.Context, kept ports.RefreshedReading, st ports.RefreshState) error {
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `INSERT INTO map_readings (map, snapshot_sha256, kept_at) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
			kept.Map, kept.Snapshot, kept.KeptAt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO map_refresh_targets (target_key, map, mark, failures, next_try, last_error, updated_at)
VALUES ($1, $2, $3, 0, $4, '', $5)
ON CONFLICT (target_key) DO UPDATE SET map = EXCLUDED.map, mark = EXCLUDED.mark, failures = 0, next_try = EXCLUDED.next_try, last_error = '', updated_at = EXCLUDED.updated_at`,
			st.TargetKey, kept.Map, clip(st.Mark, 200), st.NextTry, kept.KeptAt); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, ports.FlowersChannel, ports.RefreshedPayload+" "+kept.Map)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: keep a refreshed reading: %w", err)
	}
	return nil
}

// Skipped implements ports.MapRefresh.
func (r *MapRefreshRepository) Skipped(ctx context.Context, key, mapID string, next time.Time) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO map_refresh_targets (target_key, map, next_try, updated_at) VALUES ($1, $2, $3, now())
ON CONFLICT (target_key) DO UPDATE SET next_try = EXCLUDED.next_try, updated_at = now()`, key, mapID, next)
	if err != nil {
		return fmt.Errorf("postgres: note a skipped refresh: %w", err)
	}
	return nil
}

// Failed implements ports.MapRefresh.
func (r *MapRefreshRepository) Failed(ctx context.Context, key, mapID, reason string, next time.Time) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO map_refresh_targets (target_key, map, failures, next_try, last_error, updated_at) VALUES ($1, $2, 1, $3, $4, now())
ON CONFLICT (target_key) DO UPDATE SET failures = map_refresh_targets.failures + 1, next_try = EXCLUDED.next_try, last_error = EXCLUDED.last_error, updated_at = now()`,
		key, mapID, next, clip(reason, 500))
	if err != nil {
		return fmt.Errorf("postgres: note a failed refresh: %w", err)
	}
	return nil
}

// Readings implements ports.MapRefresh.
func (r *MapRefreshRepository) Readings(ctx context.Context, limit int) ([]ports.RefreshedReading, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT map, snapshot_sha256, kept_at FROM (
	SELECT map, snapshot_sha256, kept_at FROM map_readings ORDER BY kept_at DESC, map, snapshot_sha256 LIMIT $1) AS newest
ORDER BY kept_at, map, snapshot_sha256`, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: refreshed readings: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.RefreshedReading, error) {
		var k ports.RefreshedReading
		err := row.Scan(&k.Map, &k.Snapshot, &k.KeptAt)
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: refreshed readings: %w", err)
	}
	return out, nil
}

// ForgetDays implements ports.MapRefresh.
func (r *MapRefreshRepository) ForgetDays(ctx context.Context, before time.Time) (int64, error) {
	tag, err := r.db.Pool.Exec(ctx, `DELETE FROM map_refresh_days WHERE day < $1::date`, before.UTC().Format(time.DateOnly))
	if err != nil {
		return 0, fmt.Errorf("postgres: forget refresh days: %w", err)
	}
	return tag.RowsAffected(), nil
}

// clip cuts s to at most n characters (runes), as the columns' checks ask.
func clip(s string, n int) string {
	if r := []rune(s); len(r) > n {
		return string(r[:n])
	}
	return s
}
