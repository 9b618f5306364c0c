package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// ExplorationRepository keeps explorations and what hangs off them
// (migrations/000010_explorations).
type ExplorationRepository struct{ db *DB }

var _ ports.ExplorationStore = (*ExplorationRepository)(nil)

// NewExplorationRepository makes the exploration store over db.
func NewExplorationRepository(db *DB) *ExplorationRepository { return &ExplorationRepository{db: db} }

// CreateExploration implements ports.ExplorationStore.
func (r *ExplorationRepository) CreateExploration(ctx context.Context, e explorations.Exploration) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO explorations (id, owner, question, title, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6)`, e.ID, e.Owner, e.Question, e.Title, e.CreatedAt, e.UpdatedAt)
	if err != nil {
		return fmt.Errorf("postgres: create exploration: %w", err)
	}
	return nil
}

const explorationColumns = `id, owner, question, title, created_at, updated_at`

func scanExploration(row pgx.Row) (explorations.Exploration, error) {
	var e explorations.Exploration
	if err := row.Scan(&e.ID, &e.Owner, &e.Question, &e.Title, &e.CreatedAt, &e.UpdatedAt); err != nil {
		return e, err
	}
	e.CreatedAt, e.UpdatedAt = e.CreatedAt.UTC(), e.UpdatedAt.UTC()
	return e, nil
}

// Exploration implements ports.ExplorationStore.
func (r *ExplorationRepository) Exploration(ctx context.Context, id string) (explorations.Exploration, error) {
	e, err := scanExploration(r.db.Pool.QueryRow(ctx, `SELECT `+explorationColumns+` FROM explorations WHERE id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return e, explorations.NotFound()
	}
	if err != nil {
		return e, fmt.Errorf("postgres: read exploration: %w", err)
	}
	return e, nil
}

// OwnedBy implements ports.ExplorationStore.
func (r *ExplorationRepository) OwnedBy(ctx context.Context, owner string, after explorations.ListCursor, limit int) ([]explorations.Exploration, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT `+explorationColumns+` FROM explorations
WHERE owner = $1 AND owner <> '' AND ($2 = '' OR (created_at, id) < ($3, $2))
ORDER BY created_at DESC, id DESC LIMIT $4`, owner, after.ID, after.At, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list explorations: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (explorations.Exploration, error) { return scanExploration(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list explorations: %w", err)
	}
	return out, nil
}

// Claim implements ports.ExplorationStore.
func (r *ExplorationRepository) Claim(ctx context.Context, id, owner string, at time.Time) (bool, error) {
	tag, err := r.db.Pool.Exec(ctx, `UPDATE explorations SET owner = $2, updated_at = $3 WHERE id = $1 AND owner = ''`, id, owner, at)
	if err != nil {
		return false, fmt.Errorf("postgres: claim exploration: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// AddStep implements ports.ExplorationStore. The exploration's row is locked
// while the step takes the next number, so two steps saved at once never
// share one.
func (r *ExplorationRepository) AddStep(ctx context.Context, s explorations.Step) (explorations.Step, error) {
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE explorations SET updated_at = $2 WHERE id = $1`, s.Exploration, s.CreatedAt)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return explorations.NotFound()
		}
		// The row lock above orders this count with every other step's.
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM exploration_steps WHERE exploration = $1`, s.Exploration).Scan(&n); err != nil {
			return err
		}
		if n >= explorations.MaxSteps {
			return explorations.TooMany("steps", explorations.MaxSteps)
		}
		var spec *string
		if len(s.Spec) > 0 {
			v := string(s.Spec)
			spec = &v
		}
		return tx.QueryRow(ctx, `INSERT INTO exploration_steps (id, exploration, seq, spec_sha256, spec, note, created_at)
VALUES ($1, $2, (SELECT coalesce(max(seq), 0) + 1 FROM exploration_steps WHERE exploration = $2), $3, $4, $5, $6)
RETURNING seq`, s.ID, s.Exploration, s.SpecSHA256, spec, s.Note, s.CreatedAt).Scan(&s.Seq)
	})
	if err != nil {
		if _, ok := errs.As(err); ok {
			return s, err
		}
		return s, fmt.Errorf("postgres: add step: %w", err)
	}
	return s, nil
}

// AddNote implements ports.ExplorationStore.
func (r *ExplorationRepository) AddNote(ctx context.Context, n explorations.Note) error {
	return pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE explorations SET updated_at = $2 WHERE id = $1`, n.Exploration, n.CreatedAt)
		if err != nil {
			return fmt.Errorf("postgres: add note: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return explorations.NotFound()
		}
		var count int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM exploration_notes WHERE exploration = $1`, n.Exploration).Scan(&count); err != nil {
			return fmt.Errorf("postgres: count notes: %w", err)
		}
		if count >= explorations.MaxNotes {
			return explorations.TooMany("notes", explorations.MaxNotes)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO exploration_notes (id, exploration, text, created_at) VALUES ($1, $2, $3, $4)`,
			n.ID, n.Exploration, n.Text, n.CreatedAt); err != nil {
			return fmt.Errorf("postgres: add note: %w", err)
		}
		return nil
	})
}

// Steps implements ports.ExplorationStore.
func (r *ExplorationRepository) Steps(ctx context.Context, id string, afterSeq, limit int) ([]explorations.Step, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT id, exploration, seq, spec_sha256, coalesce(spec, ''), note, created_at
FROM exploration_steps WHERE exploration = $1 AND seq > $2 ORDER BY seq LIMIT $3`, id, afterSeq, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: read steps: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (explorations.Step, error) {
		var s explorations.Step
		var spec string
		err := row.Scan(&s.ID, &s.Exploration, &s.Seq, &s.SpecSHA256, &spec, &s.Note, &s.CreatedAt)
		if spec != "" {
			s.Spec = []byte(spec)
		}
		s.CreatedAt = s.CreatedAt.UTC()
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read steps: %w", err)
	}
	return out, nil
}

// Notes implements ports.ExplorationStore.
func (r *ExplorationRepository) Notes(ctx context.Context, id string, afterAt time.Time, afterID string, limit int) ([]explorations.Note, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT id, exploration, text, created_at
FROM exploration_notes WHERE exploration = $1 AND ($2 = '' OR (created_at, id) > ($3, $2))
ORDER BY created_at, id LIMIT $4`, id, afterID, afterAt, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: read notes: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (explorations.Note, error) {
		var n explorations.Note
		err := row.Scan(&n.ID, &n.Exploration, &n.Text, &n.CreatedAt)
		n.CreatedAt = n.CreatedAt.UTC()
		return n, err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read notes: %w", err)
	}
	return out, nil
}

// CreateLink implements ports.ExplorationStore. The cap is kept by
// migration 42's trigger: a link that works goes in only by raising its
// exploration's count under that row's lock, so two made at once can't both
// pass it, whoever makes them (a take's link too).
func (r *ExplorationRepository) CreateLink(ctx context.Context, l explorations.Link) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO exploration_links (id, exploration, scope, token_sha256, created_at)
VALUES ($1, $2, $3, $4, $5)`, l.ID, l.Exploration, string(l.Scope), l.TokenSHA256, l.CreatedAt)
	switch {
	case err == nil:
		return nil
	case tooManyLinks(err):
		return explorations.TooManyLinks()
	case isForeignKeyViolation(err):
		return explorations.NotFound()
	}
	return fmt.Errorf("postgres: create link: %w", err)
}

// tooManyLinks is migration 42's refusal of a link past the exploration's cap.
func tooManyLinks(err error) bool {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pgErr.Code == "PX409"
}

func isForeignKeyViolation(err error) bool {
	pgErr, ok := errors.AsType[*pgconn.PgError](err)
	return ok && pgErr.Code == pgerrcode.ForeignKeyViolation
}

const linkColumns = `id, exploration, scope, token_sha256, created_at, revoked_at`

func scanLink(row pgx.Row) (explorations.Link, error) {
	var l explorations.Link
	var scope string
	if err := row.Scan(&l.ID, &l.Exploration, &scope, &l.TokenSHA256, &l.CreatedAt, &l.RevokedAt); err != nil {
		return l, err
	}
	l.Scope = explorations.Scope(scope)
	l.CreatedAt = l.CreatedAt.UTC()
	if l.RevokedAt != nil {
		t := l.RevokedAt.UTC()
		l.RevokedAt = &t
	}
	return l, nil
}

// LinkByToken implements ports.ExplorationStore.
func (r *ExplorationRepository) LinkByToken(ctx context.Context, tokenSHA256 string) (explorations.Link, error) {
	l, err := scanLink(r.db.Pool.QueryRow(ctx, `SELECT `+linkColumns+` FROM exploration_links WHERE token_sha256 = $1`, tokenSHA256))
	if errors.Is(err, pgx.ErrNoRows) {
		return l, explorations.NotFound()
	}
	if err != nil {
		return l, fmt.Errorf("postgres: read link: %w", err)
	}
	return l, nil
}

// Links implements ports.ExplorationStore.
func (r *ExplorationRepository) Links(ctx context.Context, explorationID string, after explorations.ListCursor, limit int) ([]explorations.Link, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT `+linkColumns+` FROM exploration_links
WHERE exploration = $1 AND ($2 = '' OR (created_at, id) > ($3, $2))
ORDER BY created_at, id LIMIT $4`, explorationID, after.ID, after.At, limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list links: %w", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (explorations.Link, error) { return scanLink(row) })
	if err != nil {
		return nil, fmt.Errorf("postgres: list links: %w", err)
	}
	return out, nil
}

// RevokeLink implements ports.ExplorationStore.
func (r *ExplorationRepository) RevokeLink(ctx context.Context, explorationID, linkID string, at time.Time) (explorations.Link, error) {
	l, err := scanLink(r.db.Pool.QueryRow(ctx, `UPDATE exploration_links SET revoked_at = coalesce(revoked_at, $3)
WHERE exploration = $1 AND id = $2 RETURNING `+linkColumns, explorationID, linkID, at))
	if errors.Is(err, pgx.ErrNoRows) {
		return l, errs.Newf(errs.NotFound, "no link %s on this exploration", linkID)
	}
	if err != nil {
		return l, fmt.Errorf("postgres: revoke link: %w", err)
	}
	return l, nil
}

// ReserveIdempotency implements ports.ExplorationStore.
func (r *ExplorationRepository) ReserveIdempotency(ctx context.Context, caller, key, fingerprint string, at time.Time) (*ports.IdempotentAnswer, error) {
	tag, err := r.db.Pool.Exec(ctx, `INSERT INTO exploration_idempotency (caller, key, fingerprint, created_at)
VALUES ($1, $2, $3, $4) ON CONFLICT (caller, key) DO NOTHING`, caller, key, fingerprint, at)
	if err != nil {
		return nil, fmt.Errorf("postgres: reserve idempotency key: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil, nil
	}
	var prior ports.IdempotentAnswer
	err = r.db.Pool.QueryRow(ctx, `SELECT fingerprint, answer FROM exploration_idempotency WHERE caller = $1 AND key = $2`,
		caller, key).Scan(&prior.Fingerprint, &prior.Answer)
	if errors.Is(err, pgx.ErrNoRows) {
		// Released between our insert and this read: the key is free again.
		return r.ReserveIdempotency(ctx, caller, key, fingerprint, at)
	}
	if err != nil {
		return nil, fmt.Errorf("postgres: read idempotency key: %w", err)
	}
	return &prior, nil
}

// KeepIdempotentAnswer implements ports.ExplorationStore.
func (r *ExplorationRepository) KeepIdempotentAnswer(ctx context.Context, caller, key string, answer []byte) error {
	_, err := r.db.Pool.Exec(ctx, `UPDATE exploration_idempotency SET answer = $3 WHERE caller = $1 AND key = $2`, caller, key, answer)
	if err != nil {
		return fmt.Errorf("postgres: keep idempotent answer: %w", err)
	}
	return nil
}

// ReleaseIdempotency implements ports.ExplorationStore.
func (r *ExplorationRepository) ReleaseIdempotency(ctx context.Context, caller, key string) error {
	_, err := r.db.Pool.Exec(ctx, `DELETE FROM exploration_idempotency WHERE caller = $1 AND key = $2 AND answer IS NULL`, caller, key)
	if err != nil {
		return fmt.Errorf("postgres: release idempotency key: %w", err)
	}
	return nil
}

// RecordPostedReading implements ports.ExplorationStore.
func (r *ExplorationRepository) RecordPostedReading(ctx context.Context, explorationID, sha256 string, isNew bool, at time.Time) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO exploration_readings (exploration, sha256, is_new, posted_at)
VALUES ($1, $2, $3, $4) ON CONFLICT (exploration, sha256) DO NOTHING`, explorationID, sha256, isNew, at)
	if err != nil {
		return fmt.Errorf("postgres: record posted reading: %w", err)
	}
	return nil
}

// PostedReadingsSince implements ports.ExplorationStore.
func (r *ExplorationRepository) PostedReadingsSince(ctx context.Context, t time.Time) (int, error) {
	var n int
	if err := r.db.Pool.QueryRow(ctx, `SELECT count(*) FROM exploration_readings WHERE is_new AND posted_at >= $1`, t).Scan(&n); err != nil {
		return 0, fmt.Errorf("postgres: count posted readings: %w", err)
	}
	return n, nil
}

// ReservePostedReading implements ports.ExplorationStore. One transaction
// holds an advisory lock for the count and the insert, so posts racing at a
// cap on any replica take its last place once.
func (r *ExplorationRepository) ReservePostedReading(ctx context.Context, slot ports.PostedSlot, caps ports.PostedCaps) (string, error) {
	refused := ""
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('petal.posted_readings'))`); err != nil {
			return err
		}
		var site, address, owner int
		if err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE address = $2), count(*) FILTER (WHERE owner = $3 AND $3 <> '')
FROM exploration_readings WHERE is_new AND posted_at >= $1`, slot.Since, slot.Address, slot.Owner).Scan(&site, &address, &owner); err != nil {
			return err
		}
		switch {
		case site >= caps.Site:
			refused = "site"
		case address >= caps.PerAddress:
			refused = "address"
		case slot.Owner != "" && owner >= caps.PerOwner:
			refused = "owner"
		default:
			_, err := tx.Exec(ctx, `INSERT INTO exploration_readings (exploration, sha256, is_new, posted_at, address, owner)
VALUES ($1, $2, true, $3, $4, $5) ON CONFLICT (exploration, sha256) DO NOTHING`, slot.Exploration, slot.SHA256, slot.At, slot.Address, slot.Owner)
			return err
		}
		return nil
	})
	if err != nil {
		return "", fmt.Errorf("postgres: reserve a posted reading: %w", err)
	}
	return refused, nil
}

// ReleasePostedReading implements ports.ExplorationStore.
func (r *ExplorationRepository) ReleasePostedReading(ctx context.Context, explorationID, sha256 string) error {
	if _, err := r.db.Pool.Exec(ctx, `DELETE FROM exploration_readings WHERE exploration = $1 AND sha256 = $2 AND is_new`, explorationID, sha256); err != nil {
		return fmt.Errorf("postgres: release a posted reading: %w", err)
	}
	return nil
}
