package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/credit"
)

// ChatQuotes keeps quotes for chats (POST /api/v1/agent/quote).
type ChatQuotes interface {
	// CreateChatQuote stores a quote.
	CreateChatQuote(ctx context.Context, q credit.ChatQuote) error
	// ChatQuote reads one, used or not, or errs.NotFound.
	ChatQuote(ctx context.Context, id string) (credit.ChatQuote, error)
	// UseChatQuote marks a quote used at now, once: only a quote that exists,
	// isn't used, hasn't expired at now and is for threadSHA256. used is
	// false, and nothing changes, otherwise (however many try at once, one
	// uses it).
	UseChatQuote(ctx context.Context, id, threadSHA256 string, now time.Time) (used bool, err error)
}
