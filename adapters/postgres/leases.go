package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// Leases keeps process leases in the processes table (migrations/000001_foundation).
type Leases struct {
	db *DB
}

var _ ports.Leases = (*Leases)(nil)

// NewLeases makes the lease keeper over db.
func NewLeases(db *DB) *Leases { return &Leases{db: db} }

// Register implements ports.Leases.
func (l *Leases) Register(ctx context.Context, p ports.Process) error {
	_, err := l.db.Pool.Exec(ctx, `INSERT INTO processes (id, hostname, pid, build_id) VALUES ($1, $2, $3, $4)
		ON CONFLICT (id) DO UPDATE SET heartbeat_at = now()`, p.ID, p.Hostname, p.PID, p.BuildID)
	if err != nil {
		return fmt.Errorf("register process: %w", err)
	}
	return nil
}

// Heartbeat implements ports.Leases. A lease that was removed (taken for
// dead) comes back: the process is alive after all.
func (l *Leases) Heartbeat(ctx context.Context, id string) error {
	tag, err := l.db.Pool.Exec(ctx, `UPDATE processes SET heartbeat_at = now() WHERE id = $1`, id)
	if err != nil {
		return fmt.Errorf("heartbeat: %w", err)
	}
	if tag.RowsAffected() == 0 {
		return errs.Newf(errs.NotFound, "no lease %s", id)
	}
	return nil
}

// Remove implements ports.Leases.
func (l *Leases) Remove(ctx context.Context, id string) error {
	_, err := l.db.Pool.Exec(ctx, `DELETE FROM processes WHERE id = $1`, id)
	return err
}

// Alive implements ports.Leases.
func (l *Leases) Alive(ctx context.Context, id string, staleAfter time.Duration) (bool, error) {
	var alive bool
	err := l.db.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM processes WHERE id = $1 AND heartbeat_at > now() - make_interval(secs => $2))`,
		id, staleAfter.Seconds()).Scan(&alive)
	return alive, err
}

// Attestations keeps attestation reports byte for byte.
type Attestations struct {
	db *DB
}

var _ ports.Attestations = (*Attestations)(nil)

// NewAttestations makes the report store over db.
func NewAttestations(db *DB) *Attestations { return &Attestations{db: db} }

// Put implements ports.Attestations.
func (a *Attestations) Put(ctx context.Context, body []byte) (string, error) {
	sum := sha256.Sum256(body)
	name := hex.EncodeToString(sum[:])
	_, err := a.db.Pool.Exec(ctx, `INSERT INTO attestations (sha256, body) VALUES ($1, $2) ON CONFLICT (sha256) DO NOTHING`, name, body)
	if err != nil {
		return "", fmt.Errorf("store attestation: %w", err)
	}
	return name, nil
}

// Get implements ports.Attestations.
func (a *Attestations) Get(ctx context.Context, sha string) ([]byte, error) {
	var body []byte
	err := a.db.Pool.QueryRow(ctx, `SELECT body FROM attestations WHERE sha256 = $1`, sha).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, errs.Newf(errs.NotFound, "no attestation report %s", sha)
	}
	if err != nil {
		return nil, fmt.Errorf("read attestation: %w", err)
	}
	return body, nil
}
