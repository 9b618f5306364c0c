package nearai_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// countingClient is a client on fake keeping NEAR AI's counts in counts.
func countingClient(t *testing.T, fake *nearaitest.Server, counts ports.PromptCounts) *nearai.Client {
	t.Helper()
	c, err := nearai.New(nearai.Options{BaseURL: fake.BaseURL(), Key: "sk-test", Model: "deepseek-ai/DeepSeek-V3.1", Fallback: "openai/gpt-oss-120b",
		Counts: counts}, memory.NewAttestations())
	require.NoError(t, err)
	return c
}

// agentTools are n tools of realistic size (about 700 bytes each).
func agentTools(n int) []ports.ModelTool {
	var out []ports.ModelTool
	for i := range n {
		out = append(out, ports.ModelTool{Name: fmt.Sprintf("tool_%d", i), Description: strings.Repeat("what it does, and when to use it. ", 8),
			Parameters: json.RawMessage(`{"type":"object","properties":{"sha256":{"type":"string","description":"` + strings.Repeat("the snapshot's id ", 20) + `"}}}`)})
	}
	return out
}

// grow is thread after a round: the model asked for a tool, and its result
// of n bytes of JSON.
func grow(thread []runs.Message, round, n int) []runs.Message {
	id := fmt.Sprintf("call_%d", round)
	return append(append([]runs.Message(nil), thread...),
		runs.Message{Role: runs.RoleAssistant, ToolCalls: []runs.ToolCall{{ID: id, Name: "tool_1", Args: json.RawMessage(`{"sha256":"ab"}`)}}},
		runs.Message{Role: runs.RoleTool, ToolCallID: id, Name: "tool_1", Content: `{"result":"` + strings.Repeat("a fact about the DAO, ", n/22) + `"}`})
}

// TestABoundLearnedFromTheProvidersCount: a chat's first call is held at one
// token a byte; each later call at NEAR AI's count for the chat's previous
// request plus a byte a token for what was added, never under what it then
// counts, and within 1.5 times it; a new chat with the same system message
// and tools starts from the head's count, across clients sharing the store
// (replicas).
func TestABoundLearnedFromTheProvidersCount(t *testing.T) {
	fake := nearaitest.New(t)
	fake.Tokenize = true
	counts := memory.NewPromptCounts()
	c := countingClient(t, fake, counts)
	system := runs.Message{Role: runs.RoleSystem, Content: strings.Repeat("You are Petals' agent. ", 100)}
	req := ports.ModelRequest{Messages: []runs.Message{system, {Role: runs.RoleUser, Content: "who holds power in the marketing DAO?"}}, Tools: agentTools(8), MaxTokens: 2048}
	for round := range 6 {
		w := c.WorstCallFor(t.Context(), req)
		held := w
		req.Held = &held
		ans, err := c.Complete(t.Context(), req)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, w.InputTokensMax, ans.Tokens.In, "round %d: a true bound", round)
		if round == 0 {
			assert.Equal(t, "bytes", w.Source)
		} else {
			assert.Equal(t, "prefix", w.Source, "round %d", round)
			assert.LessOrEqual(t, float64(w.InputTokensMax), 1.5*float64(ans.Tokens.In), "round %d: within 1.5 times what was counted", round)
		}
		req.Held = nil
		req.Messages = grow(req.Messages, round, 1000)
	}
	other := countingClient(t, fake, counts) // another replica
	fresh := ports.ModelRequest{Messages: []runs.Message{system, {Role: runs.RoleUser, Content: "and the astro stakers?"}}, Tools: agentTools(8), MaxTokens: 2048}
	w := other.WorstCallFor(t.Context(), fresh)
	assert.Equal(t, "head", w.Source, "a first call with a head seen before")
	ans, err := other.Complete(t.Context(), fresh)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, w.InputTokensMax, ans.Tokens.In)
	assert.LessOrEqual(t, float64(w.InputTokensMax), 1.5*float64(ans.Tokens.In))

	// The same chat offered other tools: its messages' count comes from
	// under the old head, the new head's from what it is known to be.
	other2 := ports.ModelRequest{Messages: grow(fresh.Messages, 9, 1000), Tools: agentTools(3), MaxTokens: 2048}
	_, err = other.Complete(t.Context(), ports.ModelRequest{Messages: []runs.Message{system, {Role: runs.RoleUser, Content: "hello"}}, Tools: agentTools(3), MaxTokens: 2048})
	require.NoError(t, err) // the 3-tool head seen once
	w = other.WorstCallFor(t.Context(), other2)
	ans, err = other.Complete(t.Context(), other2)
	require.NoError(t, err)
	assert.Contains(t, []string{"other_head", "head"}, w.Source)
	assert.GreaterOrEqual(t, w.InputTokensMax, ans.Tokens.In)
}

// TestAProviderCountingPastTheBoundIsCaught: NEAR AI counting more input
// than the learned bound is caught: the model is distrusted (in the shared
// store), its next calls are held at one token a byte, until it is trusted.
func TestAProviderCountingPastTheBoundIsCaught(t *testing.T) {
	fake := nearaitest.New(t)
	fake.Tokenize = true
	counts := memory.NewPromptCounts()
	c := countingClient(t, fake, counts)
	req := ports.ModelRequest{Messages: []runs.Message{{Role: runs.RoleSystem, Content: "be brief"}, {Role: runs.RoleUser, Content: "the marketing DAO"}},
		Tools: agentTools(4), MaxTokens: 1024}
	_, err := c.Complete(t.Context(), req)
	require.NoError(t, err)
	req.Messages = grow(req.Messages, 1, 2000)
	w := c.WorstCallFor(t.Context(), req)
	require.Equal(t, "prefix", w.Source)
	fake.SetOverReport(w.InputTokensMax) // far past the bound, within the bytes
	req.Held = &w
	ans, err := c.Complete(t.Context(), req)
	require.NoError(t, err)
	assert.Greater(t, ans.Tokens.In, w.InputTokensMax, "billed past the bound")
	k, err := counts.Known(t.Context(), []string{"deepseek-ai/DeepSeek-V3.1"}, nil, nil)
	require.NoError(t, err)
	require.Len(t, k.Distrusted, 1)
	assert.Equal(t, ans.Tokens.In, k.Distrusted[0].Reported)
	assert.Equal(t, w.InputTokensMax, k.Distrusted[0].Bound)

	fake.SetOverReport(0)
	req.Held = nil
	again := c.WorstCallFor(t.Context(), req)
	assert.Equal(t, "distrusted", again.Source)
	assert.Equal(t, c.WorstCall(req).InputTokensMax, again.InputTokensMax, "back to one token a byte")
	require.NoError(t, counts.Trust(t.Context(), "deepseek-ai/DeepSeek-V3.1"))
	assert.Equal(t, "prefix", c.WorstCallFor(t.Context(), req).Source, "trusted again by an operator")
}

// TestACallWithoutFallback: a call held without its fallback (it didn't
// fit) is priced on its model alone and, failing, tries no other.
func TestACallWithoutFallback(t *testing.T) {
	fake := nearaitest.New(t, nearaitest.Fail(http.StatusServiceUnavailable, "error_503.json"))
	c := countingClient(t, fake, memory.NewPromptCounts())
	req := longRequest("abc", 10_000)
	with := c.WorstCallFor(t.Context(), req)
	req.NoFallback = true
	without := c.WorstCallFor(t.Context(), req)
	assert.Zero(t, without.FallbackInputTokensMax)
	assert.LessOrEqual(t, without.Bill, with.Bill)
	assert.NotZero(t, with.FallbackInputTokensMax)
	assert.Equal(t, nearai.Catalogue[0].Cost(runs.Tokens{In: without.InputTokensMax, Out: without.OutputTokensMax}), without.Bill)
	req.Held = &without
	_, err := c.Complete(t.Context(), req)
	require.Error(t, err)
	assert.Len(t, fake.Completions(), 1, "no fallback tried")
}

// TestPricesFromTheModelList: the catalogue's prices come from NEAR AI's
// model list when it prices a model in a way petal reads; the shipped table
// otherwise, or when the list can't be read.
func TestPricesFromTheModelList(t *testing.T) {
	fake := nearaitest.New(t)
	fake.SetPrices(0,
		nearaitest.ModelPrice{ID: "deepseek-ai/DeepSeek-V3.1", InputAmount: 1_200, OutputAmount: 3_000, CacheReadAmount: 300, Scale: 9},
		nearaitest.ModelPrice{ID: "openai/gpt-oss-120b", InputAmount: 15, OutputAmount: 55, Scale: 8},
		nearaitest.ModelPrice{ID: "zai-org/GLM-4.6", InputAmount: 1, OutputAmount: 1, Scale: 6, Invalid: true},
		nearaitest.ModelPrice{ID: "Qwen/Qwen3-30B-A3B-Instruct-2507", InputAmount: 100, Scale: 9, OmitOutput: true},
		nearaitest.ModelPrice{ID: "not/in-the-catalogue", InputAmount: 1, OutputAmount: 1, Scale: 9},
	)
	c, err := nearai.New(nearai.Options{BaseURL: fake.BaseURL(), Key: "sk-test", Model: "deepseek-ai/DeepSeek-V3.1", Fallback: "openai/gpt-oss-120b"}, nil)
	require.NoError(t, err)
	byID := map[string]ports.ModelPrice{}
	for _, p := range c.ModelPrices() {
		byID[p.Model] = p
	}
	require.Len(t, byID, len(nearai.Catalogue))
	ds := byID["deepseek-ai/DeepSeek-V3.1"]
	assert.Equal(t, nearai.PricesListed, ds.Source)
	assert.NotNil(t, ds.ReadAt)
	assert.EqualValues(t, 1_200_000, ds.InputPerMTok, "1,200 × 10^-9 dollars a token is $1.20 a million")
	assert.EqualValues(t, 300_000, ds.CachedPerMTok)
	assert.EqualValues(t, 3_000_000, ds.OutputPerMTok)
	oss := byID["openai/gpt-oss-120b"]
	assert.EqualValues(t, 150_000, oss.InputPerMTok)
	assert.EqualValues(t, 550_000, oss.OutputPerMTok)
	assert.EqualValues(t, 37_500, oss.CachedPerMTok, "no cache price listed: the shipped ratio")
	assert.Equal(t, nearai.PricesShipped, byID["zai-org/GLM-4.6"].Source, "a price in another currency is not taken")
	assert.Equal(t, nearai.PricesShipped, byID["Qwen/Qwen3-30B-A3B-Instruct-2507"].Source, "half a price is no price")
	assert.Nil(t, byID["zai-org/GLM-4.6"].ReadAt)

	// Holds and charges use the listed prices.
	req := longRequest("abc", 4_000)
	w := c.WorstCall(req)
	assert.EqualValues(t, 1_200_000, w.InPerMTok)

	down := nearaitest.New(t)
	down.SetPrices(http.StatusServiceUnavailable)
	c, err = nearai.New(nearai.Options{BaseURL: down.BaseURL(), Key: "sk-test", Model: "deepseek-ai/DeepSeek-V3.1", Fallback: "openai/gpt-oss-120b"}, nil)
	require.NoError(t, err)
	for _, p := range c.ModelPrices() {
		assert.Equal(t, nearai.PricesShipped, p.Source, p.Model)
	}
	assert.Equal(t, nearai.Catalogue[0].InputPerMTok, c.WorstCall(req).InPerMTok)
}

// TestAMessageIsBoundedByTheTextItsTemplateReads (issue 25): after a counted
// prefix, a message added on DeepSeek-V3.1 (its chat template writes a
// message's text as it is) is held at its text's bytes and the template's
// margins, not its wire bytes, whose JSON escapes the model never reads; on
// gpt-oss (its template writes a tool result through tojson) at its wire
// bytes. Both stay true bounds of what the fake counts.
func TestAMessageIsBoundedByTheTextItsTemplateReads(t *testing.T) {
	fake := nearaitest.New(t)
	fake.Tokenize = true
	c := countingClient(t, fake, memory.NewPromptCounts())
	system := runs.Message{Role: runs.RoleSystem, Content: "You are Petals' agent."}
	result := `{"quota":"4","accounts":[` + strings.Repeat(`{"id":"near:mainnet:alice.near","index":0.166667},`, 20) + `{"id":"x"}]}`
	for _, tc := range []struct {
		model string
		raw   bool
	}{{"deepseek-ai/DeepSeek-V3.1", true}, {"openai/gpt-oss-120b", false}} {
		t.Run(tc.model, func(t *testing.T) {
			req := ports.ModelRequest{Model: tc.model, NoFallback: true, MaxTokens: 128,
				Messages: []runs.Message{system, {Role: runs.RoleUser, Content: "what are the figures of " + tc.model + "?"}}}
			_, err := c.Complete(t.Context(), withHeld(c, req))
			require.NoError(t, err)
			counted := fake.Completions()[len(fake.Completions())-1].Usage.PromptTokens
			call := runs.Message{Role: runs.RoleAssistant, ToolCalls: []runs.ToolCall{{ID: "call_1", Name: "compute_figures", Args: json.RawMessage(`{"sha256":"ab"}`)}}}
			res := runs.Message{Role: runs.RoleTool, ToolCallID: "call_1", Name: "compute_figures", Content: result}
			req.Messages = append(req.Messages, call, res)
			w := c.WorstCallFor(t.Context(), req)
			require.Equal(t, "prefix", w.Source)
			// The text: the call's id, name and arguments; the result and the
			// id it answers; a margin (16) a message and a tool call.
			text := int64(len("call_1"+"compute_figures"+`{"sha256":"ab"}`) + len(result) + len("call_1") + 3*16)
			if tc.raw {
				assert.Equal(t, counted+text, w.InputTokensMax, "the prefix's count and the text")
			} else {
				assert.Greater(t, w.InputTokensMax, counted+text+int64(strings.Count(result, `"`)), "the wire bytes, escapes and all")
			}
			ans, err := c.Complete(t.Context(), withHeld(c, req))
			require.NoError(t, err)
			assert.GreaterOrEqual(t, w.InputTokensMax, ans.Tokens.In, "a true bound")
		})
	}
}

// withHeld is req held at its bound, as the ledger holds it.
func withHeld(c *nearai.Client, req ports.ModelRequest) ports.ModelRequest {
	w := c.WorstCallFor(context.Background(), req)
	req.Held = &w
	return req
}
