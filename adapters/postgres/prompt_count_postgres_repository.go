package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/ports"
)

// PromptCountRepository keeps the model provider's prompt token counts
// (model_prompt_prefixes, model_prompt_heads, model_bound_distrust;
// migration 44).
type PromptCountRepository struct {
	db *DB
}

var _ ports.PromptCounts = (*PromptCountRepository)(nil)

// NewPromptCountRepository makes the store over db.
func NewPromptCountRepository(db *DB) *PromptCountRepository { return &PromptCountRepository{db: db} }

// Record implements ports.PromptCounts: the prefix's row (the larger count
// of two for the same bytes) and its head's bounds, in one round trip.
func (r *PromptCountRepository) Record(ctx context.Context, c ports.PromptCount) error {
	_, err := r.db.Pool.Exec(ctx, `WITH prefix AS (
    INSERT INTO model_prompt_prefixes (model, head, prefix, messages, message_bytes, prompt_tokens, seen_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7)
    ON CONFLICT (model, prefix, head) DO UPDATE SET prompt_tokens = GREATEST(model_prompt_prefixes.prompt_tokens, EXCLUDED.prompt_tokens),
        seen_at = GREATEST(model_prompt_prefixes.seen_at, EXCLUDED.seen_at)
)
INSERT INTO model_prompt_heads (model, head, upper_tokens, lower_tokens, seen_at) VALUES ($1, $2, $6, $6 - $5, $7)
ON CONFLICT (model, head) DO UPDATE SET upper_tokens = LEAST(model_prompt_heads.upper_tokens, EXCLUDED.upper_tokens),
    lower_tokens = GREATEST(model_prompt_heads.lower_tokens, EXCLUDED.lower_tokens),
    seen_at = GREATEST(model_prompt_heads.seen_at, EXCLUDED.seen_at)`,
		c.Model, c.Head, c.Prefix, c.Messages, c.MessageBytes, c.PromptTokens, c.At)
	if err != nil {
		return fmt.Errorf("postgres: record prompt count: %w", err)
	}
	return nil
}

// Known implements ports.PromptCounts: three reads in one round trip.
func (r *PromptCountRepository) Known(ctx context.Context, models, heads, prefixes []string) (ports.PromptKnown, error) {
	var out ports.PromptKnown
	if len(models) == 0 {
		return out, nil
	}
	if len(prefixes) > ports.MaxKnownPrefixes {
		prefixes = prefixes[len(prefixes)-ports.MaxKnownPrefixes:]
	}
	var b pgx.Batch
	b.Queue(`SELECT model, head, upper_tokens, lower_tokens FROM model_prompt_heads WHERE model = ANY($1) AND head = ANY($2)`, models, heads).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var h ports.PromptHead
				if err := rows.Scan(&h.Model, &h.Head, &h.Upper, &h.Lower); err != nil {
					return err
				}
				out.Heads = append(out.Heads, h)
			}
			return rows.Err()
		})
	b.Queue(`SELECT p.model, p.head, p.prefix, p.messages, p.message_bytes, p.prompt_tokens, p.seen_at, h.upper_tokens, h.lower_tokens
FROM model_prompt_prefixes p JOIN model_prompt_heads h USING (model, head)
WHERE p.model = ANY($1) AND p.prefix = ANY($2)`, models, prefixes).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var k ports.KnownPrefix
				c := &k.Count
				if err := rows.Scan(&c.Model, &c.Head, &c.Prefix, &c.Messages, &c.MessageBytes, &c.PromptTokens, &c.At, &k.Head.Upper, &k.Head.Lower); err != nil {
					return err
				}
				k.Head.Model, k.Head.Head = c.Model, c.Head
				out.Prefixes = append(out.Prefixes, k)
			}
			return rows.Err()
		})
	b.Queue(`SELECT model, since, reported, bound, request_bytes FROM model_bound_distrust WHERE model = ANY($1)`, models).
		Query(func(rows pgx.Rows) error {
			for rows.Next() {
				var d ports.BoundDistrust
				if err := rows.Scan(&d.Model, &d.Since, &d.Reported, &d.Bound, &d.RequestBytes); err != nil {
					return err
				}
				out.Distrusted = append(out.Distrusted, d)
			}
			return rows.Err()
		})
	if err := r.db.Pool.SendBatch(ctx, &b).Close(); err != nil {
		return ports.PromptKnown{}, fmt.Errorf("postgres: known prompt counts: %w", err)
	}
	return out, nil
}

// Distrust implements ports.PromptCounts.
func (r *PromptCountRepository) Distrust(ctx context.Context, d ports.BoundDistrust) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO model_bound_distrust (model, since, reported, bound, request_bytes) VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (model) DO NOTHING`, d.Model, d.Since, d.Reported, d.Bound, d.RequestBytes)
	if err != nil {
		return fmt.Errorf("postgres: distrust a model's counts: %w", err)
	}
	return nil
}

// Trust implements ports.PromptCounts.
func (r *PromptCountRepository) Trust(ctx context.Context, model string) error {
	if _, err := r.db.Pool.Exec(ctx, `DELETE FROM model_bound_distrust WHERE model = $1`, model); err != nil {
		return fmt.Errorf("postgres: trust a model's counts: %w", err)
	}
	return nil
}

// Prune implements ports.PromptCounts.
func (r *PromptCountRepository) Prune(ctx context.Context, before time.Time) (int64, error) {
	var n int64
	err := r.db.Pool.QueryRow(ctx, `WITH p AS (DELETE FROM model_prompt_prefixes WHERE seen_at < $1 RETURNING 1),
h AS (DELETE FROM model_prompt_heads WHERE seen_at < $1 RETURNING 1)
SELECT (SELECT count(*) FROM p) + (SELECT count(*) FROM h)`, before).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("postgres: prune prompt counts: %w", err)
	}
	return n, nil
}
