package agentapp

import (
	"context"
	"time"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/conversations"
	"github.com/petal-near/petal/ports"
)

// ConversationService is GET /api/v1/conversations: the caller's runs and
// explorations as one list, newest activity first, a page at a time.
type ConversationService struct {
	store ports.Conversations
}

// NewConversationService makes the list over its store.
func NewConversationService(store ports.Conversations) *ConversationService {
	return &ConversationService{store: store}
}

// ConversationEntry is one conversation as the list answers it.
type ConversationEntry struct {
	ID          string          `json:"id"`
	Kind        string          `json:"kind"`  // run or exploration
	Title       *string         `json:"title"` // null until it is named
	UpdatedAt   time.Time       `json:"updated_at"`
	Status      string          `json:"status"` // a run's status, or open
	Exploration *ExplorationRef `json:"exploration,omitempty"`
}

// ExplorationRef names an exploration, as a run's JSON does: { id }.
type ExplorationRef struct {
	ID string `json:"id"`
}

// ConversationPage is one page of the list; next_cursor is null on the last.
type ConversationPage struct {
	Conversations []ConversationEntry `json:"conversations"`
	NextCursor    *string             `json:"next_cursor"`
}

// List is one page of the caller's conversations: their session's subject's
// (a person's, or an anonymous session's), never anyone else's. A caller
// without a session has none. limit 0 is the default; cursor "" the first
// page.
func (s *ConversationService) List(ctx context.Context, caller toolkit.Caller, limit int, cursor string) (ConversationPage, error) {
	page := ConversationPage{Conversations: []ConversationEntry{}}
	n, err := conversations.PageLimit(limit)
	if err != nil {
		return page, err
	}
	after, err := conversations.ParseCursor(cursor)
	if err != nil {
		return page, err
	}
	if caller.Subject == "" {
		return page, nil
	}
	// One more than the page says whether another follows.
	got, err := s.store.Conversations(ctx, caller.Subject, after, n+1)
	if err != nil {
		return page, err
	}
	if len(got) > n {
		got = got[:n]
		next := conversations.After(got[n-1]).String()
		page.NextCursor = &next
	}
	for _, c := range got {
		e := ConversationEntry{ID: c.ID, Kind: c.Kind, UpdatedAt: c.UpdatedAt, Status: c.Status}
		if c.Title != "" {
			title := c.Title
			e.Title = &title
		}
		if c.Exploration != "" {
			e.Exploration = &ExplorationRef{ID: c.Exploration}
		}
		page.Conversations = append(page.Conversations, e)
	}
	return page, nil
}
