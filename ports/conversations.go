package ports

import (
	"context"

	"github.com/petal-near/petal/domain/conversations"
)

// Conversations lists a session subject's work, their runs and explorations
// as one list.
type Conversations interface {
	// Conversations is at most limit of owner's runs and explorations after
	// cursor, newest activity first (updated_at, then id, both descending). A
	// run's own exploration is not an entry of its own: the run's entry
	// names it. An empty owner has none.
	Conversations(ctx context.Context, owner string, after conversations.Cursor, limit int) ([]conversations.Conversation, error)
}
