package nearai_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

func newClient(t *testing.T, fake *nearaitest.Server) (*nearai.Client, ports.Attestations) {
	t.Helper()
	attest := memory.NewAttestations()
	c, err := nearai.New(nearai.Options{BaseURL: fake.BaseURL(), Key: "sk-test", Model: "deepseek-ai/DeepSeek-V3.1", Fallback: "openai/gpt-oss-120b"}, attest)
	require.NoError(t, err)
	return c, attest
}

var request = ports.ModelRequest{
	Messages: []runs.Message{
		{Role: runs.RoleSystem, Content: "be brief"},
		{Role: runs.RoleUser, Content: "draw the marketing DAO"},
		{Role: runs.RoleAssistant, ToolCalls: []runs.ToolCall{{ID: "c1", Name: "find_target", Args: json.RawMessage(`{"query":"marketing"}`)}}},
		{Role: runs.RoleTool, ToolCallID: "c1", Name: "find_target", Content: `{"candidates":[]}`},
	},
	Tools:     []ports.ModelTool{{Name: "get_snapshot", Description: "a snapshot", Parameters: json.RawMessage(`{"type":"object"}`)}},
	MaxTokens: 512,
}

func TestCompletionWithToolCalls(t *testing.T) {
	fake := nearaitest.New(t, nearaitest.Recorded("completion_tool_call.json"))
	c, _ := newClient(t, fake)
	ans, err := c.Complete(t.Context(), request)
	require.NoError(t, err)
	assert.Equal(t, "chatcmpl-7c1e5b2a9f3d4e8b", ans.ChatID)
	assert.Equal(t, "5f0c6d1e-2b3a-5c4d-8e9f-0a1b2c3d4e5f", ans.InferenceID, "the Inference-Id header is kept")
	assert.Equal(t, "deepseek-ai/DeepSeek-V3.1", ans.Model)
	assert.False(t, ans.FallbackUsed)
	require.Len(t, ans.Message.ToolCalls, 1)
	assert.Equal(t, "get_snapshot", ans.Message.ToolCalls[0].Name)
	assert.JSONEq(t, `{"network":"near-dao-members","params":{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}}`, string(ans.Message.ToolCalls[0].Args))
	assert.Equal(t, runs.Tokens{In: 1843, Out: 58, Cached: 1024}, ans.Tokens)
	// 819 uncached at $1/M (819) + 1024 cached at $0.25/M (256) + 58 out at $2.5/M (145) = 1220 micro-dollars.
	assert.EqualValues(t, 1220, ans.Cost)

	reqs := fake.Completions()
	require.Len(t, reqs, 1)
	assert.Equal(t, "Bearer sk-test", reqs[0].Authorization)
	body := reqs[0].Body
	assert.Equal(t, false, body["stream"], "never streamed, so each answer can be signed")
	assert.Equal(t, "deepseek-ai/DeepSeek-V3.1", body["model"])
	assert.EqualValues(t, 512, body["max_tokens"])
	msgs := body["messages"].([]any)
	require.Len(t, msgs, 4)
	asst := msgs[2].(map[string]any)
	assert.Nil(t, asst["content"])
	call := asst["tool_calls"].([]any)[0].(map[string]any)
	assert.Equal(t, "function", call["type"])
	assert.Equal(t, `{"query":"marketing"}`, call["function"].(map[string]any)["arguments"])
	assert.Equal(t, "c1", msgs[3].(map[string]any)["tool_call_id"])
	tool := body["tools"].([]any)[0].(map[string]any)
	assert.Equal(t, "function", tool["type"])
	assert.Equal(t, "get_snapshot", tool["function"].(map[string]any)["name"])
}

func TestPaymentRequiredIsBudgetExhaustedAndNeverRetried(t *testing.T) {
	for kind, want := range map[string]string{
		"insufficient_credits":   nearai.BudgetMessage("insufficient_credits"),
		"api_key_limit_exceeded": nearai.BudgetMessage("api_key_limit_exceeded"),
	} {
		t.Run(kind, func(t *testing.T) {
			fake := nearaitest.New(t, nearaitest.Fail(http.StatusPaymentRequired, "error_402_"+kind+".json"))
			c, _ := newClient(t, fake)
			_, err := c.Complete(t.Context(), request)
			e, ok := errs.As(err)
			require.True(t, ok, "%v", err)
			assert.Equal(t, errs.BudgetExhausted, e.Code)
			assert.Equal(t, want, e.Message)
			assert.NotContains(t, e.Message, "$", "NEAR AI's figures stay out")
			assert.Len(t, fake.Completions(), 1, "a 402 is not retried on another model")
		})
	}
	assert.NotEqual(t, nearai.BudgetMessage("no_credits"), nearai.BudgetMessage("no_limit_configured"))
	assert.NotEqual(t, nearai.BudgetMessage("no_credits"), nearai.BudgetMessage("something_new"))
}

func TestFallbackAnswersWhenTheModelIsDown(t *testing.T) {
	fake := nearaitest.New(t, nearaitest.Fail(http.StatusServiceUnavailable, "error_503.json"), nearaitest.Recorded("completion_text.json"))
	c, _ := newClient(t, fake)
	// Long enough that the recorded answer's 2,210 input tokens are within
	// its bound: the failed attempt is charged no more than it was held at.
	ans, err := c.Complete(t.Context(), longRequest("abc", 4_000))
	require.NoError(t, err)
	assert.True(t, ans.FallbackUsed)
	reqs := fake.Completions()
	require.Len(t, reqs, 2)
	assert.Equal(t, "openai/gpt-oss-120b", reqs[1].Body["model"])
	assert.Equal(t, "The Marketing DAO has 7 members: 3 on the council and 4 in the community role.", ans.Message.Content)
	assert.Equal(t, runs.Tokens{In: 2210, Out: 31}, ans.Tokens)
	// The fallback's own cost (2210 in at $0.2/M + 31 out at $0.6/M = 460.6, up to 461) and the failed
	// attempt's input in full on the first model (2210 at $1/M).
	assert.EqualValues(t, 461+2210, ans.Cost)
}

func TestSignatureAndAttestationReportStoredByteForByte(t *testing.T) {
	fake := nearaitest.New(t)
	c, attest := newClient(t, fake)
	sig, err := c.Sign(t.Context(), ports.ModelAnswer{ChatID: "chatcmpl-7c1e5b2a9f3d4e8b", Model: "deepseek-ai/DeepSeek-V3.1"})
	require.NoError(t, err)
	assert.Equal(t, "ecdsa", sig.SigningAlgo)
	assert.Equal(t, "0x856039d8a60613528d1DBEc3dc920f5FE96a31A0", sig.SigningAddress)
	assert.Equal(t, "chatcmpl-7c1e5b2a9f3d4e8b", sig.ChatID)
	report := nearaitest.File("attestation_report.json")
	sum := sha256.Sum256(report)
	assert.Equal(t, hex.EncodeToString(sum[:]), sig.ReportSHA256)
	stored, err := attest.Get(t.Context(), sig.ReportSHA256)
	require.NoError(t, err)
	assert.Equal(t, report, stored)
	var paths []string
	for _, r := range fake.Requests() {
		paths = append(paths, r.Path)
	}
	assert.Equal(t, []string{"/v1/signature/chatcmpl-7c1e5b2a9f3d4e8b", "/v1/attestation/report"}, paths)
}

func TestOnlyCatalogueModels(t *testing.T) {
	_, err := nearai.New(nearai.Options{Model: "some/unknown", Fallback: "openai/gpt-oss-120b"}, nil)
	assert.Error(t, err)
	_, err = nearai.New(nearai.Options{Model: "openai/gpt-oss-120b", Fallback: "nope"}, nil)
	assert.Error(t, err)
}

// An effort goes only to a model that takes it: the picked model gets it as
// reasoning_effort, and a fallback that takes none answers without it.
func TestEffortGoesOnlyWhereTheModelOffersIt(t *testing.T) {
	fake := nearaitest.New(t, nearaitest.Fail(http.StatusServiceUnavailable, "error_503.json"), nearaitest.Recorded("completion_text.json"))
	attest := memory.NewAttestations()
	c, err := nearai.New(nearai.Options{BaseURL: fake.BaseURL(), Key: "sk-test", Model: "deepseek-ai/DeepSeek-V3.1", Fallback: "zai-org/GLM-4.6"}, attest)
	require.NoError(t, err)
	req := request
	req.Model, req.Effort = "openai/gpt-oss-120b", "high"
	ans, err := c.Complete(t.Context(), req)
	require.NoError(t, err)
	assert.True(t, ans.FallbackUsed)
	reqs := fake.Completions()
	require.Len(t, reqs, 2)
	assert.Equal(t, "openai/gpt-oss-120b", reqs[0].Body["model"])
	assert.Equal(t, "high", reqs[0].Body["reasoning_effort"])
	assert.Equal(t, "zai-org/GLM-4.6", reqs[1].Body["model"])
	assert.NotContains(t, reqs[1].Body, "reasoning_effort", "the fallback takes no effort")

	offers := c.Models()
	require.Len(t, offers, len(nearai.Catalogue))
	for i, m := range nearai.Catalogue {
		assert.Equal(t, m.ID, offers[i].ID)
		assert.Equal(t, m.Efforts, offers[i].Efforts)
	}
}
