package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ChatQuoteRepository keeps quotes for chats (chat_quotes, migration 28).
type ChatQuoteRepository struct {
	db *DB
}

var _ ports.ChatQuotes = (*ChatQuoteRepository)(nil)

// NewChatQuoteRepository makes the store over db.
func NewChatQuoteRepository(db *DB) *ChatQuoteRepository { return &ChatQuoteRepository{db: db} }

// CreateChatQuote implements ports.ChatQuotes.
func (r *ChatQuoteRepository) CreateChatQuote(ctx context.Context, q credit.ChatQuote) error {
	_, err := r.db.Pool.Exec(ctx, `INSERT INTO chat_quotes (id, thread_sha256, run_id, max_micros, payer, expires_at, created_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)`, q.ID, q.ThreadSHA256, q.RunID, int64(q.Max), q.Payer, q.ExpiresAt, q.CreatedAt)
	if err != nil {
		return fmt.Errorf("postgres: store quote: %w", err)
	}
	return nil
}

// ChatQuote implements ports.ChatQuotes.
func (r *ChatQuoteRepository) ChatQuote(ctx context.Context, id string) (credit.ChatQuote, error) {
	var q credit.ChatQuote
	var max int64
	err := r.db.Pool.QueryRow(ctx, `SELECT id, thread_sha256, run_id, max_micros, payer, expires_at, used_at, created_at FROM chat_quotes WHERE id = $1`, id).
		Scan(&q.ID, &q.ThreadSHA256, &q.RunID, &max, &q.Payer, &q.ExpiresAt, &q.UsedAt, &q.CreatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return q, errs.Newf(errs.NotFound, "no quote %s", id)
	}
	q.Max = credit.Micros(max)
	return q, err
}

// UseChatQuote implements ports.ChatQuotes: one conditional update, so of
// many at once exactly one finds it unused.
func (r *ChatQuoteRepository) UseChatQuote(ctx context.Context, id, threadSHA256 string, now time.Time) (bool, error) {
	tag, err := r.db.Pool.Exec(ctx, `UPDATE chat_quotes SET used_at = $3
WHERE id = $1 AND thread_sha256 = $2 AND used_at IS NULL AND expires_at > $3`, id, threadSHA256, now)
	if err != nil {
		return false, fmt.Errorf("postgres: use quote: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}
