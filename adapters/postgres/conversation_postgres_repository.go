package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/petal-near/petal/domain/conversations"
	"github.com/petal-near/petal/ports"
)

// ConversationRepository lists an owner's runs and explorations in one statement.
type ConversationRepository struct{ db *DB }

var _ ports.Conversations = (*ConversationRepository)(nil)

// NewConversationRepository makes the list over db.
func NewConversationRepository(db *DB) *ConversationRepository {
	return &ConversationRepository{db: db}
}

// conversationsSQL is each table's newest entries after the cursor, read
// down its (owner, updated_at DESC, id DESC) index and cut at the limit, then
// the two merged. The row comparison is what the index walks, so a page
// reads about limit rows of each table whatever the owner's count, on every
// page (the first page starts after firstPage, so one plan serves all). A
// run's own exploration is left out: its run names it
// (runs_exploration finds the run).
const conversationsSQL = `
(SELECT 'run' AS kind, r.id, r.title, r.updated_at, r.status, coalesce(r.exploration, '') AS exploration
   FROM runs r
  WHERE r.owner = $1 AND (r.updated_at, r.id) < ($2, $3)
  ORDER BY r.updated_at DESC, r.id DESC
  LIMIT $4)
UNION ALL
(SELECT 'exploration', e.id, e.title, e.updated_at, 'open', ''
   FROM explorations e
  WHERE e.owner = $1 AND (e.updated_at, e.id) < ($2, $3)
    AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.exploration = e.id)
  ORDER BY e.updated_at DESC, e.id DESC
  LIMIT $4)
ORDER BY updated_at DESC, id DESC
LIMIT $4`

// firstPage is after every entry: the first page's cursor.
var firstPage = time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC)

// Conversations implements ports.Conversations.
func (c *ConversationRepository) Conversations(ctx context.Context, owner string, after conversations.Cursor, limit int) ([]conversations.Conversation, error) {
	out := []conversations.Conversation{}
	if owner == "" || limit <= 0 {
		return out, nil
	}
	at, id := firstPage, ""
	if !after.IsStart() {
		at, id = after.At, after.Key
	}
	rows, err := c.db.Pool.Query(ctx, conversationsSQL, owner, at, id, limit)
	if err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var e conversations.Conversation
		if err := rows.Scan(&e.Kind, &e.ID, &e.Title, &e.UpdatedAt, &e.Status, &e.Exploration); err != nil {
			return nil, fmt.Errorf("list conversations: %w", err)
		}
		e.UpdatedAt = e.UpdatedAt.UTC()
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list conversations: %w", err)
	}
	return out, nil
}
