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

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/app/agentapp"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/runs"
)

// panicky brings one tool that panics, as a bug in a tool would.
type panicky struct{}

func (panicky) Tools() []toolkit.Tool {
	return []toolkit.Tool{toolkit.WithIO(toolkit.Tool{Name: "explode", Description: "panics"},
		func(context.Context, toolkit.Call, struct{}) (struct{ OK bool }, error) { panic("boom") })}
}

// collect is a viewer that keeps every event.
type collect struct{ evs []runs.Event }

func (c *collect) Event(e runs.Event) error { c.evs = append(c.evs, e); return nil }
func (c *collect) CaughtUp() error          { return nil }
func (c *collect) Heartbeat() error         { return nil }

func TestAPanickingToolEndsTheRunNotTheProcess(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	fake := nearaitest.New(t, nearaitest.Completion("p1", "deepseek-ai/DeepSeek-V3.1", "", nearaitest.Call{Name: "explode", Args: `{}`}))
	attest := memory.NewAttestations()
	model, err := nearai.New(nearai.Options{BaseURL: fake.BaseURL(), Key: "k", Model: "deepseek-ai/DeepSeek-V3.1", Fallback: "openai/gpt-oss-120b"}, attest)
	require.NoError(t, err)
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	limiter := memory.NewRateLimiter(memory.SystemClock{})
	hub := memory.NewEventHub()
	leases := memory.NewLeases(memory.SystemClock{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	registry := toolkit.NewRegistry(cfg, limiter, []toolkit.ToolSet{panicky{}})
	process, err := jobsapp.NewProcessID(rand.Reader)
	require.NoError(t, err)
	agent := agentapp.NewAgentService(agentapp.AgentDeps{Config: cfg, Runs: memory.NewRunRepository(memory.SystemClock{}, leases, hub), Bus: hub.Bus(), Leases: leases,
		Model: model, Attestations: attest, Registry: registry, Limiter: limiter, Log: log, Process: process, Random: rand.Reader})
	agent.Start()

	started, err := agent.Chat(ctx, toolkit.Caller{Door: toolkit.DoorHTTP, Address: "127.0.0.1", Subject: "anon_x"},
		agentapp.ChatRequest{Messages: []agentapp.ChatMessage{{Role: "user", Content: "go"}}})
	require.NoError(t, err)
	v := &collect{}
	fctx, fcancel := context.WithTimeout(ctx, 30*time.Second)
	defer fcancel()
	require.NoError(t, agent.Follow(fctx, started.RunID, 0, v))
	n := len(v.evs)
	require.GreaterOrEqual(t, n, 2)
	assert.Equal(t, runs.KindError, v.evs[n-2].Kind)
	assert.Contains(t, string(v.evs[n-2].Data), `"internal"`)
	assert.Equal(t, runs.KindDone, v.evs[n-1].Kind)
	run, err := agent.Run(ctx, toolkit.Caller{Subject: "anon_x"}, started.RunID)
	require.NoError(t, err)
	assert.Equal(t, runs.Failed, run.Status)
}
