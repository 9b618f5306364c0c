package agentapp_test

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/app/agentapp"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// twoTools brings a tool that answers and one that refuses its input.
type twoTools struct{}

func (twoTools) Tools() []toolkit.Tool {
	type answer struct {
		OK string `json:"ok"`
	}
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{Name: "echo", Description: "answers"},
			func(context.Context, toolkit.Call, struct{}) (answer, error) { return answer{OK: "yes"}, nil }),
		toolkit.WithIO(toolkit.Tool{Name: "picky", Description: "refuses"}, func(context.Context, toolkit.Call, struct{}) (answer, error) {
			return answer{}, errs.New(errs.BadInput, "not that", "ask for something else")
		}),
	}
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]attribute.Value {
	m := map[attribute.Key]attribute.Value{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value
	}
	return m
}

// A scripted chat (two tools in the first round, words in the second) makes
// one run span, a round span per model call under it, and a span per tool
// call under its round, with the run, round, model, tokens and outcomes.
func TestAChatsRoundsAndToolsAreSpans(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	const modelName = "deepseek-ai/DeepSeek-V3.1"
	fake := nearaitest.New(t,
		nearaitest.Completion("p1", modelName, "", nearaitest.Call{Name: "echo", Args: `{}`}, nearaitest.Call{Name: "picky", Args: `{}`}),
		nearaitest.Completion("p2", modelName, "done"))
	attest := memory.NewAttestations()
	model, err := nearai.New(nearai.Options{BaseURL: fake.BaseURL(), Key: "k", Model: modelName, Fallback: "openai/gpt-oss-120b"}, attest)
	require.NoError(t, err)
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	limiter := memory.NewRateLimiter(memory.SystemClock{})
	hub := memory.NewEventHub()
	leases := memory.NewLeases(memory.SystemClock{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	process, err := jobsapp.NewProcessID(rand.Reader)
	require.NoError(t, err)
	agent := agentapp.NewAgentService(agentapp.AgentDeps{Config: cfg, Runs: memory.NewRunRepository(memory.SystemClock{}, leases, hub), Bus: hub.Bus(), Leases: leases,
		Model: model, Attestations: attest, Registry: toolkit.NewRegistry(cfg, limiter, []toolkit.ToolSet{twoTools{}}), Limiter: limiter, Log: log, Process: process, Random: rand.Reader})
	recorder := tracetest.NewSpanRecorder()
	agent.TraceWith(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(recorder)))
	agent.Start()

	started, err := agent.Chat(ctx, toolkit.Caller{Door: toolkit.DoorHTTP, Address: "127.0.0.1", Subject: "anon_x"},
		agentapp.ChatRequest{Messages: []agentapp.ChatMessage{{Role: "user", Content: "go"}}})
	require.NoError(t, err)
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	defer fcancel()
	require.NoError(t, agent.Follow(fctx, started.RunID, 0, &collect{}))
	var run sdktrace.ReadOnlySpan
	require.Eventually(t, func() bool {
		for _, s := range recorder.Ended() {
			if s.Name() == "agent.run" {
				run = s
				return true
			}
		}
		return false
	}, 5*time.Second, 10*time.Millisecond, "the run's span ends with the run")

	children := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range recorder.Ended() {
		children[s.Parent().SpanID().String()] = append(children[s.Parent().SpanID().String()], s)
	}
	assert.Equal(t, started.RunID, attrs(run)["petal.run.id"].AsString())
	rounds := children[run.SpanContext().SpanID().String()]
	require.Len(t, rounds, 2, "one span per model round, under the run")
	for i, r := range rounds {
		a := attrs(r)
		assert.Equal(t, "agent.round", r.Name())
		assert.Equal(t, int64(i), a["petal.agent.round"].AsInt64())
		assert.Equal(t, started.RunID, a["petal.run.id"].AsString())
		assert.Equal(t, modelName, a["petal.agent.model"].AsString())
		allowance := a["petal.agent.tokens.out_allowance"].AsInt64()
		if i == 0 {
			assert.Equal(t, int64(128), allowance, "the first round asks the first attempt's 128 tokens")
		} else {
			assert.GreaterOrEqual(t, allowance, int64(128), "round %d asks at least the first attempt's room", i)
		}
		assert.Positive(t, a["petal.agent.tokens.used"].AsInt64(), "round %d used tokens", i)
	}
	tools := children[rounds[0].SpanContext().SpanID().String()]
	var names []string
	for _, s := range tools {
		if a := attrs(s); a["petal.tool.name"].AsString() != "" {
			names = append(names, s.Name())
			switch a["petal.tool.name"].AsString() {
			case "echo":
				assert.Equal(t, "ok", a["petal.tool.outcome"].AsString())
			case "picky":
				assert.Equal(t, "error", a["petal.tool.outcome"].AsString())
				assert.Equal(t, string(errs.BadInput), a["petal.error.code"].AsString())
			}
		}
	}
	assert.ElementsMatch(t, []string{"agent.tool echo", "agent.tool picky"}, names, "each tool call under its round")
	for _, s := range children[rounds[1].SpanContext().SpanID().String()] {
		assert.Empty(t, attrs(s)["petal.tool.name"].AsString(), "the second round called no tool")
	}
}
