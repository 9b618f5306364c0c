package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// AnnotationRepository keeps annotations (migrations/000022_annotations).
type AnnotationRepository struct{ db *DB }

var _ ports.AnnotationStore = (*AnnotationRepository)(nil)

// NewAnnotationRepository makes the annotation store over db.
func NewAnnotationRepository(db *DB) *AnnotationRepository { return &AnnotationRepository{db: db} }

// Add implements ports.AnnotationStore. The scope is locked first (the
// exploration's row, or an advisory lock on the person's scope), so two
// requests racing at the cap can't both pass it.
func (r *AnnotationRepository) Add(ctx context.Context, scope ports.AnnotationScope, cs []claims.Claim, at time.Time) ([]bool, error) {
	key := scope.Exploration
	var exploration *string
	if key == "" {
		if scope.Owner == "" {
			return nil, errors.New("postgres: an annotation needs an exploration or an owner")
		}
		key = "owner:" + scope.Owner
	} else {
		exploration = &scope.Exploration
	}
	existed := make([]bool, len(cs))
	err := pgx.BeginFunc(ctx, r.db.Pool, func(tx pgx.Tx) error {
		if exploration != nil {
			tag, err := tx.Exec(ctx, `UPDATE explorations SET updated_at = greatest(updated_at, $2) WHERE id = $1`, *exploration, at)
			if err != nil {
				return fmt.Errorf("postgres: add annotations: %w", err)
			}
			if tag.RowsAffected() == 0 {
				return explorations.NotFound()
			}
		} else if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 20))`, key); err != nil {
			return fmt.Errorf("postgres: add annotations: %w", err)
		}
		owner := ""
		if exploration == nil {
			owner = scope.Owner
		}
		for i, c := range cs {
			body, err := json.Marshal(c)
			if err != nil {
				return fmt.Errorf("postgres: add annotations: %w", err)
			}
			tag, err := tx.Exec(ctx, `INSERT INTO annotations (scope, exploration, owner, id, subject, verb, claim, added_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (scope, id) DO NOTHING`, key, exploration, owner, c.ID, c.Subject, c.Verb, string(body), at)
			if err != nil {
				return fmt.Errorf("postgres: add annotations: %w", err)
			}
			existed[i] = tag.RowsAffected() == 0
		}
		var count int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM annotations WHERE scope = $1`, key).Scan(&count); err != nil {
			return fmt.Errorf("postgres: count annotations: %w", err)
		}
		if count > claims.MaxPerProject {
			return explorations.TooMany("annotations", claims.MaxPerProject)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return existed, nil
}

const annotationColumns = `seq, coalesce(exploration, ''), owner, claim, added_at`

func scanAnnotations(rows pgx.Rows) ([]ports.Annotation, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (ports.Annotation, error) {
		var a ports.Annotation
		var body string
		if err := row.Scan(&a.Seq, &a.Exploration, &a.Owner, &body, &a.AddedAt); err != nil {
			return a, err
		}
		a.AddedAt = a.AddedAt.UTC()
		if err := json.Unmarshal([]byte(body), &a.Claim); err != nil {
			return a, errs.New(errs.Internal, "a kept annotation could not be read").WithCause(err)
		}
		return a, nil
	})
}

// InExploration implements ports.AnnotationStore.
func (r *AnnotationRepository) InExploration(ctx context.Context, exploration string, q ports.AnnotationQuery) ([]ports.Annotation, error) {
	rows, err := r.db.Pool.Query(ctx, `SELECT `+annotationColumns+` FROM annotations
WHERE exploration = $1 AND ($2 = '' OR subject = $2) AND ($3 = '' OR verb = $3) AND seq > $4 ORDER BY seq LIMIT $5`,
		exploration, q.About, q.Verb, q.AfterSeq, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list annotations: %w", err)
	}
	out, err := scanAnnotations(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: list annotations: %w", err)
	}
	return out, nil
}

// OfOwner implements ports.AnnotationStore.
func (r *AnnotationRepository) OfOwner(ctx context.Context, owner string, q ports.AnnotationQuery) ([]ports.Annotation, error) {
	if owner == "" {
		return []ports.Annotation{}, nil
	}
	// Two branches, each on its index (the owner's explorations, then their
	// annotations; the person's own in no project): one query with OR between
	// them scans the whole table (BenchmarkPetalNames).
	rows, err := r.db.Pool.Query(ctx, `SELECT `+annotationColumns+` FROM (
  SELECT a.* FROM explorations e JOIN annotations a ON a.exploration = e.id WHERE e.owner = $1
  UNION ALL
  SELECT a.* FROM annotations a WHERE a.exploration IS NULL AND a.owner = $1
) a
WHERE ($2 = '' OR subject = $2) AND ($3 = '' OR verb = $3) AND seq > $4
ORDER BY seq LIMIT $5`, owner, q.About, q.Verb, q.AfterSeq, q.Limit)
	if err != nil {
		return nil, fmt.Errorf("postgres: list annotations: %w", err)
	}
	out, err := scanAnnotations(rows)
	if err != nil {
		return nil, fmt.Errorf("postgres: list annotations: %w", err)
	}
	return out, nil
}
