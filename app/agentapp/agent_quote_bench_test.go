package agentapp

import (
	"context"
	"testing"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/runs"
)

// BenchmarkQuotePricing: what pricing a chat's nine calls for a quote costs
// (chatWorstCase: nine requests built and measured, the thread grown by 32
// KiB a round), beside its floor, the one first-call worst case the gate
// prices every chat with.
func BenchmarkQuotePricing(b *testing.B) {
	model, err := nearai.New(nearai.Options{BaseURL: "http://127.0.0.1:1", Key: "k", Model: "deepseek-ai/DeepSeek-V3.1", Fallback: "openai/gpt-oss-120b"},
		memory.NewAttestations())
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := config.LoadConfig(func(string) string { return "" })
	if err != nil {
		b.Fatal(err)
	}
	a := &AgentService{cfg: cfg, model: model, registry: toolkit.NewRegistry(cfg, memory.NewRateLimiter(memory.SystemClock{}), nil)}
	thread := []runs.Message{{Role: runs.RoleUser, Content: "draw the marketing DAO"}}
	ctx := context.Background()
	b.Run("floor-first-call", func(b *testing.B) {
		for b.Loop() {
			_ = a.model.WorstCase(a.callRequest(ctx, runs.Run{}, thread, a.modelTools()))
		}
	})
	b.Run("quote-nine-calls", func(b *testing.B) {
		for b.Loop() {
			if _, err := a.chatWorstCase(ctx, nil, quotedChat{thread: thread}); err != nil {
				b.Fatal(err)
			}
		}
	})
}
