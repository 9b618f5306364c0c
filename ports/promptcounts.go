package ports

import (
	"context"
	"time"
)

// PromptCount is what the model provider reported as a request's
// prompt_tokens, kept so a later request that starts with the same bytes
// can be held at the provider's own count for them instead of one token per
// byte. Head names what the model reads before the messages (the system
// message, the tool list, the reasoning effort: SHA-256, hex); Prefix names
// the messages after it, byte for byte (a chain of SHA-256s, so each
// shorter prefix has a name of its own).
type PromptCount struct {
	Model  string
	Head   string
	Prefix string
	// Messages is how many messages Prefix names; MessageBytes their wire
	// bytes plus the chat template's margin for each, which is the most
	// tokens they can be (one a byte).
	Messages     int
	MessageBytes int64
	PromptTokens int64
	At           time.Time
}

// PromptHead is what is known of a head's own tokens (with the chat
// template's fixed part) on a model, from every request seen with it: at
// most Upper (the fewest prompt_tokens a request with it was counted) and at
// least Lower (the most prompt_tokens less the most its messages could be).
type PromptHead struct {
	Model string
	Head  string
	Upper int64
	Lower int64
}

// BoundDistrust is a model whose provider billed more input than a bound
// learned from its own counts: until an operator clears it, its calls are
// held at one token per byte again.
type BoundDistrust struct {
	Model        string
	Since        time.Time
	Reported     int64 // the prompt_tokens billed
	Bound        int64 // the bound it passed
	RequestBytes int64
}

// PromptKnown is what PromptCounts.Known found for a request.
type PromptKnown struct {
	// Heads are the heads asked for that have been seen, by model.
	Heads []PromptHead
	// Prefixes are the counts kept for any of the prefixes asked for, under
	// any head, each with what is known of its own head.
	Prefixes []KnownPrefix
	// Distrusted are the models asked for that are distrusted.
	Distrusted []BoundDistrust
}

// KnownPrefix is a kept count and its head's bounds.
type KnownPrefix struct {
	Count PromptCount
	Head  PromptHead
}

// PromptCounts keeps the provider's reported prompt tokens by model, head
// and prefix, in PostgreSQL so every replica holds with what any has seen.
type PromptCounts interface {
	// Record keeps one request's count and folds it into its head's
	// bounds. Recording the same prefix again keeps the larger count.
	Record(ctx context.Context, c PromptCount) error
	// Known answers, for models, the heads among heads and the counts kept
	// for any of prefixes (at most MaxKnownPrefixes of them are looked up),
	// and which of models are distrusted.
	Known(ctx context.Context, models, heads, prefixes []string) (PromptKnown, error)
	// Distrust marks a model distrusted (the first mark is kept).
	Distrust(ctx context.Context, d BoundDistrust) error
	// Trust clears a model's mark: an operator has looked.
	Trust(ctx context.Context, model string) error
	// Prune deletes the counts not recorded since before, and the heads not
	// seen since then; it answers how many rows went.
	Prune(ctx context.Context, before time.Time) (int64, error)
}

// MaxKnownPrefixes bounds the prefixes one Known looks up: the longest
// known prefix of a chat's request is its previous call's, a few messages
// from its end.
const MaxKnownPrefixes = 256
