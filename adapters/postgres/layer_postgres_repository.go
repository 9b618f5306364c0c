package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/datasets"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// LayerRepository keeps layers and dataset versions (migrations/000027_layers).
type LayerRepository struct{ db *DB }

var _ ports.LayerStore = (*LayerRepository)(nil)

// NewLayerRepository makes the layer store over db.
func NewLayerRepository(db *DB) *LayerRepository { return &LayerRepository{db: db} }

// KeepLayer implements ports.LayerStore.
func (r *LayerRepository) KeepLayer(ctx context.Context, l ports.KeptLayer, v ports.KeptVersion) (bool, bool, error) {
	var layerExisted, versionExisted bool
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		if err := lockExploration(ctx, tx, l.Exploration, l.CreatedAt); err != nil {
			return err
		}
		body, _ := json.Marshal(l.Layer)
		tag, err := tx.Exec(ctx, `INSERT INTO layers (exploration, hash, about, body, created_at) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (exploration, hash) DO NOTHING`, l.Exploration, l.Hash, l.Layer.About, string(body), l.CreatedAt)
		if err != nil {
			return fmt.Errorf("postgres: keep layer: %w", err)
		}
		layerExisted = tag.RowsAffected() == 0
		if versionExisted, err = insertVersion(ctx, tx, v); err != nil {
			return err
		}
		return capped(ctx, tx, "layers", l.Exploration)
	})
	return layerExisted, versionExisted, err
}

// KeepVersion implements ports.LayerStore.
func (r *LayerRepository) KeepVersion(ctx context.Context, v ports.KeptVersion) (bool, error) {
	var existed bool
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		if err := lockExploration(ctx, tx, v.Exploration, v.CreatedAt); err != nil {
			return err
		}
		var err error
		existed, err = insertVersion(ctx, tx, v)
		return err
	})
	return existed, err
}

// lockExploration takes the exploration's row lock (so counts at the cap
// hold) and notes the change for retention.
func lockExploration(ctx context.Context, tx pgx.Tx, id string, at any) error {
	tag, err := tx.Exec(ctx, `UPDATE explorations SET updated_at = greatest(updated_at, $2) WHERE id = $1`, id, at)
	if err != nil {
		return fmt.Errorf("postgres: keep layer: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return explorations.NotFound()
	}
	return nil
}

func insertVersion(ctx context.Context, tx pgx.Tx, v ports.KeptVersion) (bool, error) {
	body, _ := json.Marshal(v.Version)
	tag, err := tx.Exec(ctx, `INSERT INTO dataset_versions (exploration, hash, about, body, accounts, created_at) VALUES ($1, $2, $3, $4, $5, $6)
ON CONFLICT (exploration, hash) DO NOTHING`, v.Exploration, v.Hash, v.Version.About, string(body), v.Count, v.CreatedAt)
	if err != nil {
		return false, fmt.Errorf("postgres: keep dataset version: %w", err)
	}
	return tag.RowsAffected() == 0, capped(ctx, tx, "dataset_versions", v.Exploration)
}

// capped refuses, rolling back, once an exploration holds more than
// datasets.MaxPerProject rows of table.
func capped(ctx context.Context, tx pgx.Tx, table, exploration string) error {
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+table+` WHERE exploration = $1`, exploration).Scan(&n); err != nil {
		return fmt.Errorf("postgres: count %s: %w", table, err)
	}
	if n > datasets.MaxPerProject {
		what := "layers"
		if table == "dataset_versions" {
			what = "dataset versions"
		}
		return explorations.TooMany(what, datasets.MaxPerProject)
	}
	return nil
}

// scope is the WHERE clause for q: the owner's explorations, or one alone.
func scope(q ports.LayerQuery) (string, string) {
	if q.Owner != "" {
		return `exploration IN (SELECT id FROM explorations WHERE owner = $1)`, q.Owner
	}
	return `exploration = $1`, q.Exploration
}

// Layer implements ports.LayerStore.
func (r *LayerRepository) Layer(ctx context.Context, q ports.LayerQuery, hash string) (ports.KeptLayer, error) {
	where, who := scope(q)
	got, err := r.layers(ctx, `SELECT seq, exploration, hash, body, created_at FROM layers WHERE `+where+` AND hash = $2 ORDER BY seq LIMIT 1`, who, hash)
	if err != nil {
		return ports.KeptLayer{}, err
	}
	if len(got) == 0 {
		return ports.KeptLayer{}, errs.Newf(errs.NotFound, "no layer %s", hash)
	}
	return got[0], nil
}

// Version implements ports.LayerStore.
func (r *LayerRepository) Version(ctx context.Context, q ports.LayerQuery, hash string) (ports.KeptVersion, error) {
	where, who := scope(q)
	got, err := r.versions(ctx, `SELECT seq, exploration, hash, body, accounts, created_at FROM dataset_versions WHERE `+where+` AND hash = $2 ORDER BY seq LIMIT 1`, who, hash)
	if err != nil {
		return ports.KeptVersion{}, err
	}
	if len(got) == 0 {
		return ports.KeptVersion{}, errs.Newf(errs.NotFound, "no dataset version %s", hash)
	}
	return got[0], nil
}

// Layers implements ports.LayerStore.
func (r *LayerRepository) Layers(ctx context.Context, q ports.LayerQuery) ([]ports.KeptLayer, error) {
	where, who := scope(q)
	return r.layers(ctx, `SELECT seq, exploration, hash, body, created_at FROM layers WHERE `+where+`
AND ($2 = '' OR about = $2) AND seq > $3 ORDER BY seq LIMIT $4`, who, q.About, q.AfterSeq, q.Limit)
}

// Versions implements ports.LayerStore.
func (r *LayerRepository) Versions(ctx context.Context, q ports.LayerQuery) ([]ports.KeptVersion, error) {
	where, who := scope(q)
	return r.versions(ctx, `SELECT seq, exploration, hash, body, accounts, created_at FROM dataset_versions WHERE `+where+`
AND ($2 = '' OR about = $2) AND seq > $3 ORDER BY seq LIMIT $4`, who, q.About, q.AfterSeq, q.Limit)
}

func (r *LayerRepository) layers(ctx context.Context, sql string, args ...any) ([]ports.KeptLayer, error) {
	rows, err := r.db.Pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: read layers: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.KeptLayer, error) {
		var k ports.KeptLayer
		var body string
		if err := row.Scan(&k.Seq, &k.Exploration, &k.Hash, &body, &k.CreatedAt); err != nil {
			return k, err
		}
		k.CreatedAt = k.CreatedAt.UTC()
		var err error
		k.Layer, err = datasets.Decode[datasets.Layer]([]byte(body))
		return k, err
	})
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("postgres: read layers: %w", err)
	}
	return out, nil
}

func (r *LayerRepository) versions(ctx context.Context, sql string, args ...any) ([]ports.KeptVersion, error) {
	rows, err := r.db.Pool.Query(ctx, sql, args...)
	if err != nil {
		return nil, fmt.Errorf("postgres: read dataset versions: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.KeptVersion, error) {
		var k ports.KeptVersion
		var body string
		if err := row.Scan(&k.Seq, &k.Exploration, &k.Hash, &body, &k.Count, &k.CreatedAt); err != nil {
			return k, err
		}
		k.CreatedAt = k.CreatedAt.UTC()
		var err error
		k.Version, err = datasets.Decode[datasets.Version]([]byte(body))
		return k, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read dataset versions: %w", err)
	}
	return out, nil
}
