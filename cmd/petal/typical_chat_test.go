package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/credit"
)

// typicalQuestion is the question of issue 25's typical chat.
const typicalQuestion = "Draw the marketing DAO: who holds power in it?"

// typicalStep is one model call of the typical chat: the tool its answer
// asks for ("" for the last, which answers in words and names the chat).
type typicalStep struct {
	tool, args string
}

// typicalChat is issue 25's typical chat: find the target, read it, count,
// propose, draw, answer — six model calls whose tool results are the real
// tools' answers on the shipped Marketing DAO snapshot. The spec drawn is
// the one propose_spec makes, asked of the registry first.
func typicalChat(t testing.TB, p *testPetal) []typicalStep {
	t.Helper()
	sha := snapshotsapp.ShippedSnapshots()[0].SHA256
	intent := "who holds power in the marketing DAO"
	out, err := p.Svc.Registry.Call(t.Context(), "propose_spec", toolkit.Call{Input: json.RawMessage(`{"sha256":"` + sha + `","intent":"` + intent + `"}`),
		Caller: toolkit.Caller{Door: toolkit.DoorHTTP, Address: "127.0.0.1"}})
	require.NoError(t, err)
	raw, err := json.Marshal(out)
	require.NoError(t, err)
	var proposal struct {
		Spec json.RawMessage `json:"spec"`
	}
	require.NoError(t, json.Unmarshal(raw, &proposal))
	require.NotEmpty(t, proposal.Spec, string(raw))
	spec, _ := json.Marshal(map[string]json.RawMessage{"spec": proposal.Spec})
	return []typicalStep{
		{"find_target", `{"query":"the marketing DAO"}`},
		{"get_snapshot", `{"network":"near-dao-members","params":{"dao":"marketing"}}`},
		{"compute_figures", `{"sha256":"` + sha + `"}`},
		{"propose_spec", `{"sha256":"` + sha + `","intent":"` + intent + `"}`},
		{"render_flower", string(spec)},
		{"", ""},
	}
}

// typicalScript is the fake's answers for the typical chat on model.
func typicalScript(steps []typicalStep, model string) []nearaitest.Answer {
	var script []nearaitest.Answer
	for i, s := range steps {
		id := fmt.Sprintf("typ%d", i+1)
		if s.tool == "" {
			script = append(script, nearaitest.Completion(id, model,
				"Here is the Marketing DAO's flower: its council holds every vote, and the members who only hold a role are the petals around it.",
				nearaitest.Call{Name: "name_conversation", Args: `{"title":"Power in the Marketing DAO"}`}))
			continue
		}
		script = append(script, nearaitest.Completion(id, model, "", nearaitest.Call{Name: s.tool, Args: s.args}))
	}
	return script
}

// typicalRow is one model call of a chat as a person's budget sees it.
type typicalRow struct {
	asks         string
	requestBytes int
	hold, actual credit.Micros
	promptTokens int64
	// inputBound is the input the hold counted, worked back from it on the
	// default model (its bill is its input and max_tokens at its prices).
	inputBound int64
}

// chatHolds is each model call of run: what its answer asked for, its
// request's bytes, the hold on the paying account and what it was charged.
func chatHolds(t testing.TB, p *testPetal, calls []nearaitest.Request, steps []typicalStep, runID, account string) []typicalRow {
	t.Helper()
	rows, err := p.DB.Pool.Query(t.Context(), `SELECT amount_micros, coalesce(charged_micros, 0) FROM credit_holds WHERE run_id = $1 AND account_id = $2 ORDER BY created_at, reservation_id`, runID, account)
	require.NoError(t, err)
	var out []typicalRow
	for i := 0; rows.Next(); i++ {
		var r typicalRow
		require.NoError(t, rows.Scan(&r.hold, &r.actual))
		if i < len(steps) {
			r.asks = steps[i].tool
		}
		if i < len(calls) {
			r.requestBytes, r.promptTokens = calls[i].Bytes, calls[i].Usage.PromptTokens
			m := nearai.Catalogue[0]
			if calls[i].Body["model"] == m.ID {
				out, _ := calls[i].Body["max_tokens"].(float64)
				r.inputBound = (int64(r.hold)*1_000_000 - int64(out)*int64(m.OutputPerMTok)) / int64(m.InputPerMTok)
			}
		}
		out = append(out, r)
	}
	require.NoError(t, rows.Err())
	return out
}

// holdsTable is the table of a chat's calls.
func holdsTable(rows []typicalRow, end string) string {
	var b strings.Builder
	b.WriteString("| call | asks for | request bytes | input held (tokens) | input counted | held ÷ counted | hold | actual | hold ÷ actual |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n")
	for i, r := range rows {
		asks := r.asks
		if asks == "" {
			asks = "the answer"
		}
		ratio := "—"
		if r.actual > 0 {
			ratio = fmt.Sprintf("%.2f", float64(r.hold)/float64(r.actual))
		}
		in := "—"
		if r.inputBound > 0 && r.promptTokens > 0 {
			in = fmt.Sprintf("%.2f", float64(r.inputBound)/float64(r.promptTokens))
		}
		fmt.Fprintf(&b, "| %d | %s | %d | %d | %d | %s | $%.4f | $%.4f | %s |\n", i+1, asks, r.requestBytes, r.inputBound, r.promptTokens, in,
			float64(r.hold)/1e6, float64(r.actual)/1e6, ratio)
	}
	b.WriteString("ended: " + end + "\n")
	return b.String()
}

// typicalPetal is petal on a fake NEAR AI counting tokens as a tokenizer
// does, gated (invites), the typical chat's steps ready.
type typicalPetal struct {
	p     *testPetal
	fake  *nearaitest.Server
	steps []typicalStep
}

// lastCalls are the fake's requests of the last chat (six calls).
func (tp typicalPetal) lastCalls() []nearaitest.Request {
	all := tp.fake.Completions()
	return all[max(len(all)-len(tp.steps), 0):]
}

func startTypical(t testing.TB) typicalPetal {
	t.Helper()
	fake := nearaitest.New(t)
	fake.Tokenize = true
	env := modelEnv(fake)
	env["PETAL_AGENT_ACCESS"] = "gated"
	env["PETAL_NEW_CHATS_PER_HOUR"] = "1000"
	env["PETAL_NEAR_RPC_MAINNET"] = nearrpctest.New(t).URL
	p := startPetal(t, env)
	return typicalPetal{p: p, fake: fake, steps: typicalChat(t, p)}
}

// chat runs the typical chat on a fresh invite of usd (a chat may spend
// $0.05 of it) on model ("" the default), and answers its calls and events.
func (tp typicalPetal) chat(t testing.TB, model, usd string) ([]typicalRow, []sseEvent) {
	t.Helper()
	before := len(tp.fake.Completions())
	tp.fake.Script(typicalScript(tp.steps, model)...)
	cookie, inv := inviteSession(t, tp.p, usd)
	body := `{"messages":[{"role":"user","content":"` + typicalQuestion + `"}]`
	if model != "" {
		body += `,"settings":{"model":"` + model + `"}`
	}
	body += `}`
	res, out := tp.p.do(t, http.MethodPost, "/api/v1/agent/chat", body, "Cookie", cookie, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, out)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(out), &started))
	var evs []sseEvent
	for _, e := range tp.p.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+started["run_id"], "", "Cookie", cookie).rest(t) {
		if e.Name != "live" {
			evs = append(evs, e)
		}
	}
	return chatHolds(t, tp.p, tp.fake.Completions()[before:], tp.steps, started["run_id"], "invite:"+inv), evs
}

// endOf says how a chat's stream ended: done, or the error's code and message.
func endOf(t testing.TB, evs []sseEvent) string {
	for _, e := range evs {
		if e.Name == "error" {
			d := e.json(t)
			return fmt.Sprintf("%v: %v", d["code"], d["message"])
		}
	}
	flower := "no flower"
	for _, e := range evs {
		if e.Name == "flower" {
			flower = "a flower"
		}
	}
	return "done, with " + flower
}

// TestTheTypicalChatFinishesInItsBudget is issue 25's goal, and prints its
// table: on the default model, a fresh $0.05-a-chat invite, the typical
// chat finishes with a flower and a final message; every call's input is
// held at a true bound (never under what NEAR AI counts), and after a
// chat's first call at what NEAR AI counted of the call before plus a token
// a byte of the text added since (issue 25, item 1), nothing more; a second
// chat starts from what the first taught, its calls that repeat the first
// chat's held at NEAR AI's count exactly. Held ÷ counted is 1.2-1.4 after the
// first call, by how large the tool result each call adds is next to what
// was counted: a byte a token is the only bound on new bytes petal can prove
// (docs/money.md); each hold ÷ what the call cost is at most 1.5 (the
// issue's goal). Run with -v for the tables.
func TestTheTypicalChatFinishesInItsBudget(t *testing.T) {
	tp := startTypical(t)
	for i, name := range []string{"a first chat on a fresh server", "a second chat, the same head known"} {
		rows, evs := tp.chat(t, "", "1.00")
		t.Logf("%s, on the default model:\n%s", name, holdsTable(rows, endOf(t, evs)))
		require.Equal(t, "done, with a flower", endOf(t, evs))
		require.Len(t, rows, 6, "six model calls")
		assert.Contains(t, names(evs[len(evs)-8:]), "message", "a final message after the last tool: %v", names(evs))
		var charged credit.Micros
		for j, r := range rows {
			charged += r.actual
			assert.GreaterOrEqual(t, r.inputBound, r.promptTokens, "call %d: a true bound", j+1)
			if j > 0 {
				// The previous call's count, and each message added since
				// (its wire bytes: the body's growth) with its template
				// margin, 16 tokens.
				prev := rows[j-1]
				assert.LessOrEqual(t, r.inputBound, prev.promptTokens+int64(r.requestBytes-prev.requestBytes)+2*16,
					"call %d: what was counted before, and a token a byte of what is new", j+1)
			}
			if i > 0 || j > 0 {
				assert.LessOrEqual(t, float64(r.hold), 1.5*float64(r.actual), "call %d: held at most 1.5 times what it cost", j+1)
			}
			if i > 0 && j < 2 {
				assert.Equal(t, r.promptTokens, r.inputBound, "call %d: the first chat's request, held at its count", j+1)
			}
		}
		assert.LessOrEqual(t, charged, credit.Micros(50_000))
	}
}

// TestTheTypicalChatOnEachCatalogueModel: the typical chat finishes with a
// flower and a final message on every model a chat may pick, within its
// $0.05, nothing left held.
func TestTheTypicalChatOnEachCatalogueModel(t *testing.T) {
	tp := startTypical(t)
	for _, m := range nearai.Catalogue {
		t.Run(m.ID, func(t *testing.T) {
			rows, evs := tp.chat(t, m.ID, "1.00")
			t.Logf("on %s:\n%s", m.ID, holdsTable(rows, endOf(t, evs)))
			require.Equal(t, "done, with a flower", endOf(t, evs))
			require.Len(t, rows, 6)
			var charged credit.Micros
			for _, r := range rows {
				charged += r.actual
				assert.LessOrEqual(t, r.hold, credit.Micros(50_000))
			}
			assert.LessOrEqual(t, charged, credit.Micros(50_000))
		})
	}
	assert.Zero(t, heldOnLedger(t, tp.p))
}

// TestAProviderBillingPastTheBoundIsCaught (issue 25): NEAR AI counting more
// input than a learned bound is counted (petal_model_input_bound_exceeded_total),
// the model is distrusted in PostgreSQL (every replica), and the chat's next
// calls are held at one token a byte again; no chat passes its cap.
func TestAProviderBillingPastTheBoundIsCaught(t *testing.T) {
	tp := startTypical(t)
	rows, evs := tp.chat(t, "", "1.00") // learns the head and the prefixes
	require.Equal(t, "done, with a flower", endOf(t, evs))
	require.Less(t, rows[1].inputBound, int64(rows[1].requestBytes), "call 2 held at a learned bound")

	tp.fake.SetOverReport(3_000) // past any learned bound's slack, within the bytes
	rows, evs = tp.chat(t, "", "1.00")
	t.Logf("NEAR AI over-counting by 3,000 tokens:\n%s", holdsTable(rows, endOf(t, evs)))
	scrape := scrapeOf(t, tp.p)
	assert.Equal(t, 1.0, metricValue(t, scrape, "petal_model_input_bound_exceeded_total", "model", "deepseek-ai/DeepSeek-V3.1"), "caught once, then distrusted")
	var reported, bound int64
	require.NoError(t, tp.p.DB.Pool.QueryRow(t.Context(), `SELECT reported, bound FROM model_bound_distrust WHERE model = 'deepseek-ai/DeepSeek-V3.1'`).Scan(&reported, &bound))
	assert.Greater(t, reported, bound)
	require.Greater(t, len(rows), 1)
	caught := -1
	for i, r := range rows {
		if r.promptTokens > r.inputBound {
			caught = i
			break
		}
	}
	require.GreaterOrEqual(t, caught, 0, "one call was billed past its bound")
	for _, r := range rows[caught+1:] {
		// Back at one token a byte of the request (and its template margin).
		assert.GreaterOrEqual(t, r.inputBound, int64(r.requestBytes), "held at the byte bound after")
		assert.GreaterOrEqual(t, r.inputBound, r.promptTokens)
	}
	assert.Zero(t, heldOnLedger(t, tp.p))

	// The operator looks, and trusts it again.
	out, errOut, code := petalCLI(t, tp.p, "model", "distrusted")
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "deepseek-ai/DeepSeek-V3.1")
	_, errOut, code = petalCLI(t, tp.p, "model", "trust", "deepseek-ai/DeepSeek-V3.1")
	require.Equal(t, 0, code, errOut)
	out, _, _ = petalCLI(t, tp.p, "model", "distrusted")
	assert.Contains(t, out, "none")
}

// TestEveryToolIsWithinTheAgentsReach (issue 25): each round offers its
// stage's tools, not all; more_tools lists every tool the agent may call and
// adds the one asked for to the next round, for each of them.
func TestEveryToolIsWithinTheAgentsReach(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t)
	env := modelEnv(fake)
	env["PETAL_NEW_CHATS_PER_HOUR"] = "1000"
	p := startPetal(t, env)
	first := map[string]bool{}
	for _, name := range []string{"find_target", "get_snapshot", "compute_figures", "propose_spec", "validate_spec", "render_flower", "name_conversation", "more_tools"} {
		first[name] = true
	}
	bytes, all := p.Svc.Agent.StageToolBytes()
	t.Logf("tool list bytes by stage: %v; all: %d", bytes, all)
	for stage, n := range bytes {
		assert.Less(t, n, all/2, "stage %s offers less than half the tools' bytes", stage)
	}
	var toolNames []string
	for _, tl := range p.Svc.Registry.OfferedToAgent() {
		if !tl.HiddenFromAgent {
			toolNames = append(toolNames, tl.Name)
		}
	}
	toolNames = append(toolNames, "annotate") // the agent's own
	for _, name := range toolNames {
		if first[name] {
			continue
		}
		t.Run(name, func(t *testing.T) {
			before := len(fake.Completions())
			fake.Script(
				nearaitest.Completion("m1", "deepseek-ai/DeepSeek-V3.1", "", nearaitest.Call{Name: "more_tools", Args: `{"add":["` + name + `"]}`}),
				nearaitest.Completion("m2", "deepseek-ai/DeepSeek-V3.1", "Found it."),
			)
			evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", drawIt).rest(t)
			require.Equal(t, "done", evs[len(evs)-1].Name, names(evs))
			calls := fake.Completions()[before:]
			require.Len(t, calls, 2)
			assert.False(t, offeredOn(calls[0])[name], "not offered on the first round")
			assert.True(t, offeredOn(calls[0])["more_tools"])
			assert.True(t, offeredOn(calls[1])[name], "offered once more_tools added it")
			msgs := calls[1].Body["messages"].([]any)
			listed := msgs[len(msgs)-1].(map[string]any)["content"].(string)
			assert.Contains(t, listed, `"name":"`+name+`"`, "more_tools lists it")
		})
	}
}

// BenchmarkTypicalChatHolds prints issue 25's table (each call of the
// typical chat: what it asks for, its request's bytes, the input held and
// counted, its hold and what it was charged) on the default model and a
// fresh $0.05-a-chat invite: the first chat on a fresh server, then one
// whose head NEAR AI has counted. Each iteration is one whole chat; it
// reports the largest hold ÷ actual after the first call of a prefix (the
// issue's goal: ≤ 1.5), the first call's on a fresh server, and what a
// chat is charged. The floor beside each hold is its actual column: what
// the call cost.
//
//	go test ./cmd/petal -run '^$' -bench BenchmarkTypicalChatHolds -benchtime 3x
func BenchmarkTypicalChatHolds(b *testing.B) {
	tp := startTypical(b)
	var worstAfterFirst, firstCall float64
	var charged credit.Micros
	chats := 0
	for b.Loop() {
		rows, evs := tp.chat(b, "", "1.00")
		if end := endOf(b, evs); end != "done, with a flower" {
			b.Fatalf("chat %d ended %s", chats+1, end)
		}
		for j, r := range rows {
			ratio := float64(r.hold) / float64(max(r.actual, 1))
			if chats == 0 && j == 0 {
				firstCall = ratio
			} else {
				worstAfterFirst = max(worstAfterFirst, ratio)
			}
			charged += r.actual
		}
		if chats < 2 {
			name := []string{"a first chat on a fresh server", "a second chat, the same head known"}[chats]
			b.Logf("%s, on the default model:\n%s\nwhat its holds are made of:\n%s", name, holdsTable(rows, endOf(b, evs)), holdsBreakdown(tp.lastCalls(), rows))
		}
		chats++
	}
	b.ReportMetric(worstAfterFirst, "hold/actual-max")
	b.ReportMetric(firstCall, "hold/actual-first")
	b.ReportMetric(float64(charged)/float64(chats), "µ$/chat")
}

// holdsBreakdown says what each call's hold is made of after the first:
// the count of the call before (its prefix), each message added since (its
// role and the tool it carries; its wire bytes, the text a raw chat
// template reads, and what the fake's tokenizer counted of it), the input
// held past the prefix (the text a token a byte, the template's margins),
// and the output allowance (max_tokens) beside the output the call used.
func holdsBreakdown(calls []nearaitest.Request, rows []typicalRow) string {
	var b strings.Builder
	b.WriteString("| call | prefix counted | new messages: wire / text bytes / counted tokens | new held | new counted | max_tokens | output used |\n| --- | --- | --- | --- | --- | --- | --- |\n")
	for i := 1; i < len(calls) && i < len(rows); i++ {
		prev, _ := calls[i-1].Body["messages"].([]any)
		msgs, _ := calls[i].Body["messages"].([]any)
		var parts []string
		var counted int64
		for _, m := range msgs[min(len(prev), len(msgs)):] {
			mm, _ := m.(map[string]any)
			raw, _ := json.Marshal(mm)
			one, _ := json.Marshal(map[string]any{"messages": []any{mm}})
			tokens := nearaitest.Tokens(one) - nearaitest.TemplateOnce
			content, _ := mm["content"].(string)
			id, _ := mm["tool_call_id"].(string)
			text := len(content) + len(id)
			what := fmt.Sprint(mm["role"])
			if tcs, ok := mm["tool_calls"].([]any); ok {
				for _, tc := range tcs {
					tcm, _ := tc.(map[string]any)
					f, _ := tcm["function"].(map[string]any)
					name, _ := f["name"].(string)
					args, _ := f["arguments"].(string)
					tid, _ := tcm["id"].(string)
					what += " " + name + "()"
					text += len(name) + len(args) + len(tid)
				}
			}
			parts = append(parts, fmt.Sprintf("%s %d / %d / %d", what, len(raw), text, tokens))
			counted += tokens
		}
		maxTokens, _ := calls[i].Body["max_tokens"].(float64)
		fmt.Fprintf(&b, "| %d | %d | %s | %d | %d | %d | %d |\n", i+1, calls[i-1].Usage.PromptTokens, strings.Join(parts, "; "),
			rows[i].inputBound-calls[i-1].Usage.PromptTokens, counted, int(maxTokens), calls[i].Usage.CompletionTokens)
	}
	return b.String()
}
