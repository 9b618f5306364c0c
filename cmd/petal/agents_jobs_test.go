package main

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/people"
)

const scriptedModel = "deepseek-ai/DeepSeek-V3.1"

// fund gives a person a dollar of their own credit.
func fund(t *testing.T, db *pgtest.DB, person string) {
	t.Helper()
	_, err := db.Pool.Exec(t.Context(), `INSERT INTO credit_accounts (id, kind, limit_micros) VALUES ($1, 'person', 1000000)`, credit.PersonAccount(person))
	require.NoError(t, err)
}

// chatTo starts a chat (or the next chat of runID) and waits for its run to end.
func chatTo(t *testing.T, p *testPetal, cookie, runID, text string) string {
	t.Helper()
	body := `{"messages":[{"role":"user","content":"` + text + `"}]`
	if runID != "" {
		body += `,"run_id":"` + runID + `"`
	}
	res, raw := p.do(t, http.MethodPost, "/api/v1/agent/chat", body+"}", "Cookie", cookie, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, raw)
	var started struct {
		RunID string `json:"run_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &started))
	runEnded(t, p, cookie, started.RunID)
	return started.RunID
}

type runRead struct {
	Status   string
	Messages []struct{ Role, Content string }
	Events   []struct {
		Event string
		Data  json.RawMessage
	}
	Exploration *struct{ ID string }
}

func runEnded(t *testing.T, p *testPetal, cookie, id string) runRead {
	t.Helper()
	var run runRead
	require.Eventually(t, func() bool {
		res, raw := p.do(t, http.MethodGet, "/api/v1/agent/runs/"+id, "", "Cookie", cookie)
		require.Equal(t, http.StatusOK, res.StatusCode, raw)
		run = runRead{}
		require.NoError(t, json.Unmarshal([]byte(raw), &run))
		return run.Status != "running"
	}, 30*time.Second, 20*time.Millisecond)
	return run
}

func report(t *testing.T, p *testPetal, job, link, summary string) (int, string) {
	t.Helper()
	res, raw := p.do(t, http.MethodPost, "/api/v1/jobs/"+job+"/report", `{"status":"done","summary":"`+summary+`","exploration":"`+link+`"}`)
	return res.StatusCode, raw
}

// TestAReportStartsANewTurnOfTheRunThatHandedTheJobOut: Petals' agent hands
// a job out on one replica, the person's agent waiting on the other takes
// it, and its report lands as notes and starts a new turn of the run, paid
// from the person's credit; the live signal fires on the other replica.
func TestAReportStartsANewTurnOfTheRunThatHandedTheJobOut(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t,
		nearaitest.Completion("c1", scriptedModel, "", nearaitest.Call{Name: "hand_job", Args: `{"title":"Read the DAO","brief":"Draw the members of sputnik-dao.near","to":"Codex"}`}),
		nearaitest.Completion("c2", scriptedModel, "I handed it to Codex."),
		nearaitest.Completion("c3", scriptedModel, "Codex drew it: 12 members."),
	)
	db := pgtest.New(t)
	env := modelEnv(fake)
	// A site with a model key reads its receiver at start.
	rpc := nearrpctest.New(t)
	params, _ := json.Marshal(map[string]string{"request_type": "view_account", "finality": "final", "account_id": "petals.near"})
	rpc.Add(nearrpctest.Recording{Method: "query", Params: params, Response: json.RawMessage(`{"jsonrpc":"2.0","id":"x","result":{"amount":"1",` +
		`"locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":1,"storage_paid_at":0,"block_height":1,"block_hash":"11111111111111111111111111111111"}}`)})
	env["PETAL_NEAR_RPC_MAINNET"] = rpc.URL
	a := startProcess(t, db, env)
	b := startProcess(t, db, env)
	alice, cookie := personOn(t, a.testPetal)
	fund(t, db, alice)
	token := agentLink(t, a.testPetal, cookie)

	got := make(chan waitAnswer, 1)
	go func() {
		code, ans, raw := wait(t, b.testPetal, token, `{"as":"codex","wait_s":30}`)
		assert.Equal(t, http.StatusOK, code, raw)
		got <- ans
	}()
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM agent_workers WHERE owner = $1 AND waiting_until > now()`, alice).Scan(&n))
		return n == 1
	}, 20*time.Second, 20*time.Millisecond)

	runID := chatTo(t, a.testPetal, cookie, "", "have my agent draw the DAO")
	ans := <-got
	require.NotNil(t, ans.Job, "the waiter on the other replica took the job")
	assert.Equal(t, "Read the DAO", ans.Job.Title)
	assert.Equal(t, "Draw the members of sputnik-dao.near", ans.Project.Question)
	link := ans.Project.Exploration
	assert.Contains(t, string(ans.View), `"schema":"view/v1"`, "the person's view (the default here), for render_flower")
	require.Contains(t, link, "/s/")

	run := runEnded(t, a.testPetal, cookie, runID)
	require.NotNil(t, run.Exploration)
	var jobEvent map[string]any
	for _, e := range run.Events {
		if e.Event == "job" {
			require.NoError(t, json.Unmarshal(e.Data, &jobEvent))
		}
	}
	require.NotNil(t, jobEvent, "the run carries the job event")
	assert.Equal(t, ans.Job.ID, jobEvent["id"])
	assert.Equal(t, "codex", jobEvent["to"])
	assert.Equal(t, "open", jobEvent["status"])
	assert.Equal(t, ans.Job.Conversation, jobEvent["conversation"])

	// The page follows the handing conversation's live signal on B.
	live := b.openSSE(t, http.MethodGet, "/api/v1/explorations/"+run.Exploration.ID+"/live", "", "Cookie", cookie)
	ev, ok := live.next(t)
	require.True(t, ok)
	require.Equal(t, "ready", ev.Name)

	res, raw := a.do(t, http.MethodGet, "/api/v1/agents", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, raw)
	assert.Contains(t, raw, `"job":{"id":"`+ans.Job.ID+`","title":"Read the DAO","exploration":"`+ans.Job.Conversation+`"}`)

	// The worker's note through its own link, on A, reaches a page following
	// the job's conversation on B.
	conv := b.openSSE(t, http.MethodGet, "/api/v1/explorations/"+ans.Job.Conversation+"/live", "", "Cookie", cookie)
	ev, ok = conv.next(t)
	require.True(t, ok)
	require.Equal(t, "ready", ev.Name)
	workerToken := link[strings.LastIndex(link, "/s/")+3:]
	res, raw = a.do(t, http.MethodPost, "/api/v1/explorations/"+workerToken+"/notes", `{"text":"reading the members"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, raw)
	ev, ok = conv.next(t)
	require.True(t, ok)
	assert.Equal(t, "changed", ev.Name, "a note is a change")
	conv.close()
	res, raw = b.do(t, http.MethodGet, "/api/v1/explorations/"+ans.Job.Conversation, "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, raw)
	assert.Contains(t, raw, `"presence":{"client":"codex","n":1,"worker":null,"job":"`+ans.Job.ID+`"`, "the job's conversation shows who works there")
	var lastSeen *time.Time
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT last_seen FROM agent_jobs WHERE id = $1`, ans.Job.ID).Scan(&lastSeen))
	require.NotNil(t, lastSeen, "a call through the worker's link marks the job alive")

	code, raw := report(t, a.testPetal, ans.Job.ID, link, "Drew it: 12 members.")
	require.Equal(t, http.StatusOK, code, raw)
	assert.Contains(t, raw, `"taken_up":true`)
	ev, ok = live.next(t)
	require.True(t, ok)
	assert.Equal(t, "changed", ev.Name, "the other replica's page hears the report")
	live.close()

	run = runEnded(t, a.testPetal, cookie, runID)
	calls := fake.Completions()
	require.Len(t, calls, 3, "the report started a turn")
	system := func(i int) string {
		msgs := calls[i].Body["messages"].([]any)
		return msgs[0].(map[string]any)["content"].(string)
	}
	assert.Contains(t, system(0), `Agents connected (the person's own`, "the first call is told who is connected")
	assert.Contains(t, system(0), `"name":"codex","n":1,"waiting":true`)
	assert.Contains(t, system(2), `Jobs of this conversation`)
	assert.Contains(t, system(2), `"status":"done"`)
	assert.Contains(t, system(2), `"held_by":"codex 1"`)
	last := run.Messages[len(run.Messages)-1]
	assert.Equal(t, "Codex drew it: 12 members.", last.Content)
	var found bool
	for _, m := range run.Messages {
		found = found || (m.Role == "user" && strings.HasPrefix(m.Content, `(Petals) The job "Read the DAO" came back from codex`))
	}
	assert.True(t, found, "the report is the person's message of the new turn: %+v", run.Messages)
	var spent int64
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT spent_micros FROM credit_accounts WHERE id = $1`, credit.PersonAccount(alice)).Scan(&spent))
	assert.Positive(t, spent, "paid from the person's own credit")

	res, raw = b.do(t, http.MethodGet, "/api/v1/explorations/"+run.Exploration.ID+"/jobs", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, raw)
	assert.Contains(t, raw, `"status":"done"`)
	assert.Contains(t, raw, `"report":"Drew it: 12 members."`)
	res, raw = b.do(t, http.MethodGet, "/api/v1/explorations/"+ans.Job.Conversation, "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, raw)
	assert.Contains(t, raw, `The job \"Read the DAO\" came back: Drew it`, "the report is a note in the job's own conversation")

	_, bob := personOn(t, a.testPetal)
	for _, path := range []string{"/api/v1/explorations/" + run.Exploration.ID + "/jobs", "/api/v1/explorations/" + run.Exploration.ID + "/live"} {
		res, raw = a.do(t, http.MethodGet, path, "", "Cookie", bob)
		assert.Equal(t, http.StatusNotFound, res.StatusCode, "%s: %s", path, raw)
	}
	res, raw = a.do(t, http.MethodPost, "/api/v1/jobs/"+ans.Job.ID+"/retry", "", "Cookie", bob)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "another's job is the same 404 as none: %s", raw)
}

func endedOf(t *testing.T, raw string) string {
	var body struct {
		Error struct{ Code, Ended string }
	}
	require.NoError(t, json.Unmarshal([]byte(raw), &body), raw)
	require.Equal(t, "unauthorised", body.Error.Code, raw)
	return body.Error.Ended
}

// TestSupervisionAndJobsInParts: retry, hand-over and stop refuse the old
// worker's next call with error.ended; a job in parts is taken up once, by
// the report that completes the group.
func TestSupervisionAndJobsInParts(t *testing.T) {
	t.Parallel()
	fake := nearaitest.New(t,
		nearaitest.Completion("c1", scriptedModel, "", nearaitest.Call{Name: "hand_job", Args: `{"title":"Two DAOs","brief":"Draw both",` +
			`"parts":[{"title":"First DAO","brief":"Draw a.sputnik-dao.near"},{"title":"Second DAO","brief":"Draw b.sputnik-dao.near"}]}`}),
		nearaitest.Completion("c2", scriptedModel, "Sent in two parts."),
		nearaitest.Completion("c3", scriptedModel, "Both came back."),
	)
	p := startPetal(t, modelEnv(fake))
	alice, cookie := personOn(t, p)
	fund(t, p.DB, alice)
	token := agentLink(t, p, cookie)
	runID := chatTo(t, p, cookie, "", "draw both DAOs")
	run := runEnded(t, p, cookie, runID)
	jobs := 0
	for _, e := range run.Events {
		if e.Event == "job" {
			jobs++
			assert.Contains(t, string(e.Data), `"part_of":"job_`)
		}
	}
	require.Equal(t, 2, jobs, "one job event per part")

	take := func(as string) waitAnswer {
		code, ans, raw := wait(t, p, token, `{"as":"`+as+`","wait_s":0}`)
		require.Equal(t, http.StatusOK, code, raw)
		return ans
	}
	first, second := take("Codex"), take("Codex")
	require.NotNil(t, first.Job)
	require.NotNil(t, second.Job)
	assert.Equal(t, "First DAO", first.Job.Title)
	assert.Equal(t, first.Job.Conversation, second.Job.Conversation, "parts share one conversation")

	supervise := func(job, action, body string) (int, string) {
		res, raw := p.do(t, http.MethodPost, "/api/v1/jobs/"+job+"/"+action, body, "Cookie", cookie)
		return res.StatusCode, raw
	}
	code, raw := supervise(first.Job.ID, "retry", "")
	require.Equal(t, http.StatusOK, code, raw)
	assert.Contains(t, raw, `"status":"open"`)
	code, raw = report(t, p, first.Job.ID, first.Project.Exploration, "late")
	assert.Equal(t, http.StatusUnauthorized, code)
	assert.Equal(t, "handed_over", endedOf(t, raw))
	oldToken := first.Project.Exploration[strings.LastIndex(first.Project.Exploration, "/s/")+3:]
	res, raw := p.do(t, http.MethodGet, "/api/v1/explorations/"+oldToken+"/jobs", "")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "every call through the old link is refused: %s", raw)
	res, raw = p.do(t, http.MethodPost, "/api/v1/explorations/"+oldToken+"/notes", `{"text":"still working"}`)
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "an exploration tool through the old link too: %s", raw)
	assert.Equal(t, "handed_over", endedOf(t, raw))
	third := take("Codex")
	require.NotNil(t, third.Job)
	assert.Equal(t, first.Job.ID, third.Job.ID, "retried: whoever takes it first")

	code, raw = supervise(second.Job.ID, "hand-over", `{"to":"Claude Code"}`)
	require.Equal(t, http.StatusOK, code, raw)
	assert.Contains(t, raw, `"to":"claude code"`)
	code, raw = report(t, p, second.Job.ID, second.Project.Exploration, "late")
	assert.Equal(t, "handed_over", endedOf(t, raw), "%d", code)
	assert.Nil(t, take("Codex").Job, "handed over to another agent")
	fourth := take("claude code")
	require.NotNil(t, fourth.Job)
	code, raw = supervise(second.Job.ID, "stop", "")
	require.Equal(t, http.StatusOK, code, raw)
	code, raw = report(t, p, second.Job.ID, fourth.Project.Exploration, "late")
	assert.Equal(t, "stopped", endedOf(t, raw), "%d", code)
	code, raw = supervise(second.Job.ID, "stop", "")
	assert.Equal(t, http.StatusBadRequest, code, "a stopped job can't stop again: %s", raw)
	code, raw = supervise(second.Job.ID, "hand-over", "")
	assert.Equal(t, http.StatusBadRequest, code, raw)
	code, raw = supervise(second.Job.ID, "retry", "")
	require.Equal(t, http.StatusOK, code, raw)
	fifth := take("Claude Code")
	require.NotNil(t, fifth.Job)

	// Through MCP, with the agent link as agent_key: nothing is open now.
	res, raw = p.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"take_job","arguments":{"agent_key":"`+token+`","as":"Codex"}}}`,
		"Accept", "application/json, text/event-stream")
	require.Equal(t, http.StatusOK, res.StatusCode, raw)
	assert.Contains(t, raw, `\"job\":null}`, "take_job through MCP")

	code, raw = report(t, p, third.Job.ID, third.Project.Exploration, strings.Repeat("x", agentjobs.MaxReport+1))
	assert.Equal(t, http.StatusBadRequest, code, "a report is at most 256 KiB")
	assert.Contains(t, raw, `"bad_input"`)
	// report_job through MCP with the agent key, as the person's agent.
	res, raw = p.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"report_job","arguments":{"agent_key":"`+token+
		`","job":"`+third.Job.ID+`","status":"done","summary":"a has 3 members"}}}`, "Accept", "application/json, text/event-stream")
	require.Equal(t, http.StatusOK, res.StatusCode, raw)
	assert.Contains(t, raw, `\"taken_up\":false`, "one part back of two: %s", raw)
	code, raw = report(t, p, third.Job.ID, third.Project.Exploration, "again")
	assert.Equal(t, http.StatusUnauthorized, code, "reported already: the worker's link ended with the report: %s", raw)
	assert.Contains(t, raw, `"ended":"reported"`)
	code, raw = report(t, p, fifth.Job.ID, fifth.Project.Exploration, "b has 5 members")
	require.Equal(t, http.StatusOK, code, raw)
	assert.Contains(t, raw, `"taken_up":true`, "the report completing the group takes them all up")
	run = runEnded(t, p, cookie, runID)
	require.Len(t, fake.Completions(), 3)
	var msg string
	for _, m := range run.Messages {
		if m.Role == "user" && strings.HasPrefix(m.Content, "(Petals) All 2 parts") {
			msg = m.Content
		}
	}
	assert.Contains(t, msg, "a has 3 members")
	assert.Contains(t, msg, "b has 5 members")
}

// TestHandJobRefusals: a brief past 16 KiB, and a run whose person isn't
// signed in, hand nothing out; Petals' agent's own tools are no tool at all
// through another door.
func TestHandJobRefusals(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("b", agentjobs.MaxBrief+1)
	fake := nearaitest.New(t,
		nearaitest.Completion("c1", scriptedModel, "", nearaitest.Call{Name: "hand_job", Args: `{"title":"Too long","brief":"` + long + `"}`}),
		nearaitest.Completion("c2", scriptedModel, "That was too long."),
		nearaitest.Completion("c3", scriptedModel, "", nearaitest.Call{Name: "hand_job", Args: `{"title":"Anonymous","brief":"draw it"}`}),
		nearaitest.Completion("c4", scriptedModel, "Sign in first."),
	)
	p := startPetal(t, modelEnv(fake))
	alice, cookie := personOn(t, p)
	fund(t, p.DB, alice)
	results := func(run runRead) []string {
		var out []string
		for _, e := range run.Events {
			if e.Event == "tool_result" {
				out = append(out, string(e.Data))
			}
		}
		return out
	}
	runID := chatTo(t, p, cookie, "", "hand out a long job")
	rs := results(runEnded(t, p, cookie, runID))
	require.Len(t, rs, 1)
	assert.Contains(t, rs[0], "bad_input")
	assert.Contains(t, rs[0], "/brief")

	anon, _ := people.NewAnonymousHandle(rand.Reader)
	anonCookie := "petal_session=" + sessionFor(t, p, anon, time.Now())
	runID = chatTo(t, p, anonCookie, "", "hand out a job")
	rs = results(runEnded(t, p, anonCookie, runID))
	require.Len(t, rs, 1)
	assert.Contains(t, rs[0], "unauthorised")
	var n int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM agent_jobs`).Scan(&n))
	assert.Zero(t, n, "nothing was handed out")
	var convs int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM explorations WHERE owner = $1`, alice).Scan(&convs))
	assert.LessOrEqual(t, convs, 1, "a refused hand-out makes no conversation for the job")

	res, raw := p.do(t, http.MethodPost, "/mcp", `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hand_job","arguments":{"title":"t","brief":"b"}}}`,
		"Accept", "application/json, text/event-stream")
	assert.Equal(t, http.StatusOK, res.StatusCode, raw)
	assert.Contains(t, raw, `unknown tool \"hand_job\"`, "not through MCP: an agent-only tool is no tool at all there")
}
