package porttest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/ports"
)

// PromptCountsContract runs the PromptCounts contract against fresh stores.
func PromptCountsContract(t *testing.T, newStore func(t *testing.T) ports.PromptCounts) {
	const model, other = "deepseek-ai/DeepSeek-V3.1", "openai/gpt-oss-120b"
	h := func(c string) string { return strings.Repeat(c, 64) }
	count := func(head, prefix string, messages int, bytes, tokens int64) ports.PromptCount {
		return ports.PromptCount{Model: model, Head: h(head), Prefix: h(prefix), Messages: messages, MessageBytes: bytes, PromptTokens: tokens, At: suiteNow}
	}
	t.Run("a count is found by its prefix under any head, with its head's bounds; a head's bounds narrow", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		must(t, s.Record(ctx, count("a", "1", 1, 100, 1_500)))
		must(t, s.Record(ctx, count("a", "2", 3, 1_100, 1_900)))
		must(t, s.Record(ctx, count("b", "3", 3, 1_100, 2_600)))
		k, err := s.Known(ctx, []string{model}, []string{h("a")}, []string{h("2"), h("3"), h("9")})
		must(t, err)
		// Head a: at most the fewest tokens (1,500), at least the most less
		// its messages' bytes (max(1,400, 800)).
		if len(k.Heads) != 1 || k.Heads[0] != (ports.PromptHead{Model: model, Head: h("a"), Upper: 1_500, Lower: 1_400}) {
			t.Fatalf("heads: %+v", k.Heads)
		}
		got := map[string]ports.KnownPrefix{}
		for _, p := range k.Prefixes {
			got[p.Count.Prefix] = p
		}
		if len(got) != 2 || got[h("2")].Count.PromptTokens != 1_900 || got[h("2")].Count.Messages != 3 || got[h("2")].Count.MessageBytes != 1_100 ||
			got[h("2")].Head.Lower != 1_400 || !got[h("2")].Count.At.Equal(suiteNow) {
			t.Fatalf("prefix 2: %+v", got)
		}
		if b := got[h("3")]; b.Count.Head != h("b") || b.Head.Upper != 2_600 || b.Head.Lower != 1_500 {
			t.Fatalf("prefix 3, under head b: %+v", b)
		}
		if k, err := s.Known(ctx, []string{other}, []string{h("a")}, []string{h("2")}); err != nil || len(k.Heads)+len(k.Prefixes) != 0 {
			t.Fatalf("another model knows nothing: %+v %v", k, err)
		}
	})
	t.Run("the same bytes counted twice keep the larger count", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		must(t, s.Record(ctx, count("a", "1", 1, 100, 1_500)))
		must(t, s.Record(ctx, count("a", "1", 1, 100, 1_450)))
		must(t, s.Record(ctx, count("a", "1", 1, 100, 1_520)))
		k, err := s.Known(ctx, []string{model}, []string{h("a")}, []string{h("1")})
		must(t, err)
		if len(k.Prefixes) != 1 || k.Prefixes[0].Count.PromptTokens != 1_520 {
			t.Fatalf("prefix: %+v", k.Prefixes)
		}
		if k.Heads[0].Upper != 1_450 || k.Heads[0].Lower != 1_420 {
			t.Fatalf("head: %+v", k.Heads)
		}
	})
	t.Run("only the last MaxKnownPrefixes prefixes are looked up", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		must(t, s.Record(ctx, count("a", "1", 1, 100, 1_500)))
		many := []string{h("1")}
		for i := range ports.MaxKnownPrefixes {
			many = append(many, fmt.Sprintf("%064x", i+1))
		}
		k, err := s.Known(ctx, []string{model}, nil, many)
		must(t, err)
		if len(k.Prefixes) != 0 {
			t.Fatalf("the first of too many prefixes was looked up: %+v", k.Prefixes)
		}
	})
	t.Run("a distrusted model is named until it is trusted again; the first mark stays", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		must(t, s.Distrust(ctx, ports.BoundDistrust{Model: model, Since: suiteNow, Reported: 9_000, Bound: 8_000, RequestBytes: 30_000}))
		must(t, s.Distrust(ctx, ports.BoundDistrust{Model: model, Since: suiteNow.Add(time.Hour), Reported: 1, Bound: 0, RequestBytes: 1}))
		k, err := s.Known(ctx, []string{model, other}, nil, nil)
		must(t, err)
		if len(k.Distrusted) != 1 || k.Distrusted[0].Reported != 9_000 || k.Distrusted[0].Bound != 8_000 || !k.Distrusted[0].Since.Equal(suiteNow) {
			t.Fatalf("distrusted: %+v", k.Distrusted)
		}
		must(t, s.Trust(ctx, model))
		if k, _ := s.Known(ctx, []string{model}, nil, nil); len(k.Distrusted) != 0 {
			t.Fatalf("trusted again: %+v", k.Distrusted)
		}
	})
	t.Run("prune deletes what was not seen since", func(t *testing.T) {
		s := newStore(t)
		ctx := t.Context()
		old := count("a", "1", 1, 100, 1_500)
		old.At = suiteNow.Add(-8 * 24 * time.Hour)
		must(t, s.Record(ctx, old))
		must(t, s.Record(ctx, count("b", "2", 1, 100, 1_500)))
		n, err := s.Prune(ctx, suiteNow.Add(-7*24*time.Hour))
		must(t, err)
		if n != 2 {
			t.Fatalf("pruned %d rows, want 2 (a prefix and its head)", n)
		}
		k, _ := s.Known(ctx, []string{model}, []string{h("a"), h("b")}, []string{h("1"), h("2")})
		if len(k.Heads) != 1 || len(k.Prefixes) != 1 || k.Prefixes[0].Count.Prefix != h("2") {
			t.Fatalf("after prune: %+v", k)
		}
	})
	t.Run("counts recorded at once are all kept, the head's bounds the tightest", func(t *testing.T) {
		s := newStore(t)
		var wg sync.WaitGroup
		for i := range 20 {
			wg.Go(func() {
				c := count("a", "", 2, 200, int64(2_000+i))
				c.Prefix = fmt.Sprintf("%064x", i)
				if err := s.Record(t.Context(), c); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
		var all []string
		for i := range 20 {
			all = append(all, fmt.Sprintf("%064x", i))
		}
		k, err := s.Known(t.Context(), []string{model}, []string{h("a")}, all)
		must(t, err)
		if len(k.Prefixes) != 20 || k.Heads[0].Upper != 2_000 || k.Heads[0].Lower != 2_019-200 {
			t.Fatalf("%d prefixes, head %+v", len(k.Prefixes), k.Heads)
		}
	})
}
