package porttest

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// ChatQuotesContract runs the ChatQuotes contract against fresh stores.
func ChatQuotesContract(t *testing.T, newStore func(t *testing.T) ports.ChatQuotes) {
	sha := strings.Repeat("ab", 32)
	quote := func(id string) credit.ChatQuote {
		return credit.ChatQuote{ID: "quo_" + strings.Repeat(id, 32), ThreadSHA256: sha, Max: 42_000, Payer: "credit",
			ExpiresAt: suiteNow.Add(credit.QuoteTTL), CreatedAt: suiteNow}
	}
	t.Run("a quote is read back, and used once, before it expires, for its thread only", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		q := quote("1")
		must(t, s.CreateChatQuote(ctx, q))
		got, err := s.ChatQuote(ctx, q.ID)
		if err != nil || got.Max != 42_000 || got.Payer != "credit" || got.UsedAt != nil || !got.ExpiresAt.Equal(q.ExpiresAt) {
			t.Fatalf("read back: %+v %v", got, err)
		}
		if used, err := s.UseChatQuote(ctx, q.ID, strings.Repeat("cd", 32), suiteNow); err != nil || used {
			t.Fatalf("another thread: %v %v", used, err)
		}
		if used, err := s.UseChatQuote(ctx, q.ID, sha, suiteNow.Add(credit.QuoteTTL)); err != nil || used {
			t.Fatalf("expired: %v %v", used, err)
		}
		if used, err := s.UseChatQuote(ctx, q.ID, sha, suiteNow.Add(time.Minute)); err != nil || !used {
			t.Fatalf("use: %v %v", used, err)
		}
		if used, err := s.UseChatQuote(ctx, q.ID, sha, suiteNow.Add(time.Minute)); err != nil || used {
			t.Fatalf("used again: %v %v", used, err)
		}
		if got, _ := s.ChatQuote(ctx, q.ID); got.UsedAt == nil {
			t.Fatal("marked used")
		}
		if _, err := s.ChatQuote(ctx, quote("9").ID); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown: %v", err)
		}
	})
	t.Run("of many racing to use one quote, one does", func(t *testing.T) {
		s := newStore(t)
		q := quote("2")
		must(t, s.CreateChatQuote(t.Context(), q))
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				used, err := s.UseChatQuote(t.Context(), q.ID, sha, suiteNow)
				if err != nil {
					t.Error(err)
				}
				if used {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("used %d times", wins.Load())
		}
	})
}
