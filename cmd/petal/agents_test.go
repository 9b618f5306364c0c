package main

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/domain/agentjobs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/ports"
)

// personOn signs a new person in on p's database: their id and session cookie.
func personOn(t *testing.T, p *testPetal) (string, string) {
	t.Helper()
	id, err := people.NewPersonID(rand.Reader)
	require.NoError(t, err)
	return id, "petal_session=" + sessionFor(t, p, id, time.Now())
}

// agentLink makes an agent link through the door and returns its token.
func agentLink(t *testing.T, p *testPetal, cookie string) string {
	t.Helper()
	res, body := p.do(t, http.MethodPost, "/api/v1/agents/link", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var made struct {
		ID, Token string
	}
	require.NoError(t, json.Unmarshal([]byte(body), &made))
	require.True(t, strings.HasPrefix(made.Token, "petal_agent_"), made.Token)
	return made.Token
}

type waitAnswer struct {
	Job *struct {
		ID, Title, Brief, Conversation string
	} `json:"job"`
	Project *struct {
		Exploration, Question string
	} `json:"project"`
	View json.RawMessage `json:"view"`
}

func wait(t *testing.T, p *testPetal, token, body string) (int, waitAnswer, string) {
	t.Helper()
	res, raw := p.do(t, http.MethodPost, "/api/v1/agents/wait", body, "Authorization", "Bearer "+token)
	var ans waitAnswer
	if res.StatusCode == http.StatusOK {
		require.NoError(t, json.Unmarshal([]byte(raw), &ans), raw)
	}
	return res.StatusCode, ans, raw
}

// openJobs opens n jobs for owner straight in the store and wakes the
// waiters, as hand_job does.
func openJobs(t *testing.T, db *pgtest.DB, owner string, n int) []string {
	t.Helper()
	ctx := t.Context()
	exps := postgres.NewExplorationRepository(db.DB)
	exp, err := explorations.NewID(rand.Reader, explorations.IDPrefix)
	require.NoError(t, err)
	now := time.Now().UTC()
	require.NoError(t, exps.CreateExploration(ctx, explorations.Exploration{ID: exp, Owner: owner, Question: "q", CreatedAt: now, UpdatedAt: now}))
	var jobs []agentjobs.Job
	var ids []string
	for i := range n {
		id, err := explorations.NewID(rand.Reader, "job_")
		require.NoError(t, err)
		ids = append(ids, id)
		jobs = append(jobs, agentjobs.Job{ID: id, Owner: owner, Exploration: exp, Conversation: exp, Kind: "map", Title: fmt.Sprint("job ", i),
			Brief: "b", Status: agentjobs.Open, CreatedAt: now.Add(time.Duration(i) * time.Microsecond)})
	}
	require.NoError(t, postgres.NewAgentJobRepository(db.DB).Open(ctx, jobs, explorations.Exploration{}, agentjobs.MaxOpenPerPerson))
	_, err = db.Pool.Exec(ctx, `SELECT pg_notify('petal_runs', 't jobs ' || $1)`, owner)
	require.NoError(t, err)
	return ids
}

func TestAgentLinksAreAPersonsAndShownOnce(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	res, body := p.do(t, http.MethodPost, "/api/v1/agents/link", "")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, body)
	anon, _ := people.NewAnonymousHandle(rand.Reader)
	res, body = p.do(t, http.MethodPost, "/api/v1/agents/link", "", "Cookie", "petal_session="+sessionFor(t, p, anon, time.Now()))
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "an anonymous session has no agents: %s", body)

	_, alice := personOn(t, p)
	_, bob := personOn(t, p)
	res, body = p.do(t, http.MethodPost, "/api/v1/agents/link", "", "Cookie", alice, "Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")
	assert.Equal(t, http.StatusUnauthorized, res.StatusCode, "another site can't make one: %s", body)
	first := agentLink(t, p, alice)
	second := agentLink(t, p, alice)
	var stored int
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM agent_links WHERE token_sha256 = $1`, people.HashToken(first)).Scan(&stored))
	assert.Equal(t, 1, stored, "only the hash is kept")
	res, body = p.do(t, http.MethodGet, "/api/v1/agents/link", "", "Cookie", alice)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.NotContains(t, body, "petal_agent_")
	var listed struct{ Links []struct{ ID string } }
	require.NoError(t, json.Unmarshal([]byte(body), &listed))
	require.Len(t, listed.Links, 2)

	res, body = p.do(t, http.MethodPost, "/api/v1/agents/link/revoke", `{"id":"`+listed.Links[0].ID+`"}`, "Cookie", bob)
	assert.Equal(t, http.StatusNotFound, res.StatusCode, "another's link is the same 404 as none: %s", body)
	res, body = p.do(t, http.MethodPost, "/api/v1/agents/link/revoke", `{"id":"`+listed.Links[0].ID+`"}`, "Cookie", alice)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	code, _, raw := wait(t, p, first, `{"as":"Codex","wait_s":0}`)
	assert.Equal(t, http.StatusUnauthorized, code, "a revoked link stops at its next call: %s", raw)
	code, ans, raw := wait(t, p, second, `{"as":"Codex","wait_s":0}`)
	require.Equal(t, http.StatusOK, code, raw)
	assert.Nil(t, ans.Job)
	assert.JSONEq(t, `{"tools_version":"1.0.0","job":null}`, raw)

	for _, bad := range []string{`{"as":""}`, `{"as":"Codex","wait_s":91}`, `{"as":"Codex","worker":"no spaces"}`, `{"as":"Codex","colour":1}`} {
		code, _, raw := wait(t, p, second, bad)
		assert.Equal(t, http.StatusBadRequest, code, "%s: %s", bad, raw)
	}
	code, _, raw = wait(t, p, "petal_agent_nope", `{"as":"Codex"}`)
	assert.Equal(t, http.StatusUnauthorized, code, raw)

	for range agentjobs.MaxLinksPerPerson - 1 {
		agentLink(t, p, alice)
	}
	res, body = p.do(t, http.MethodPost, "/api/v1/agents/link", "", "Cookie", alice)
	assert.Equal(t, http.StatusTooManyRequests, res.StatusCode, "at most 100 links that work: %s", body)
}

func TestAWaitThatTimesOutAnswersNoJobAndShowsPresence(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	_, alice := personOn(t, p)
	token := agentLink(t, p, alice)
	done := make(chan struct{})
	go func() {
		defer close(done)
		code, ans, raw := wait(t, p, token, `{"as":"Codex","worker":"w1","wait_s":2,"can":"runs sub-agents on two models"}`)
		assert.Equal(t, http.StatusOK, code, raw)
		assert.Nil(t, ans.Job, raw)
	}()
	var agents struct {
		Agents []struct {
			Name    string
			N       int
			Worker  *string
			Waiting bool
			Can     *string
		}
	}
	require.Eventually(t, func() bool {
		res, body := p.do(t, http.MethodGet, "/api/v1/agents", "", "Cookie", alice)
		require.Equal(t, http.StatusOK, res.StatusCode, body)
		require.NoError(t, json.Unmarshal([]byte(body), &agents))
		return len(agents.Agents) == 1 && agents.Agents[0].Waiting
	}, 10*time.Second, 20*time.Millisecond)
	a := agents.Agents[0]
	assert.Equal(t, "Codex", a.Name)
	assert.Equal(t, 1, a.N)
	require.NotNil(t, a.Worker)
	assert.Equal(t, "w1", *a.Worker)
	require.NotNil(t, a.Can)
	<-done
	res, body := p.do(t, http.MethodGet, "/api/v1/agents", "", "Cookie", alice)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, body, `"waiting":false`, "the wait is over")
	_, bob := personOn(t, p)
	res, body = p.do(t, http.MethodGet, "/api/v1/agents", "", "Cookie", bob)
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.JSONEq(t, `{"tools_version":"1.0.0","agents":[]}`, body, "another person sees none of them")
}

func TestWaitersOnTwoReplicasTakeEachJobExactlyOnce(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	a := startProcess(t, db, nil)
	b := startProcess(t, db, nil)
	owner, cookie := personOn(t, a.testPetal)
	token := agentLink(t, a.testPetal, cookie)
	_, bobCookie := personOn(t, a.testPetal)
	bobToken := agentLink(t, a.testPetal, bobCookie)

	const waiters, jobs = 8, 24
	var mu sync.Mutex
	taken := map[string]int{}
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for i := range waiters {
		p := a.testPetal
		if i%2 == 1 {
			p = b.testPetal
		}
		wg.Go(func() {
			for ctx.Err() == nil {
				code, ans, raw := wait(t, p, token, fmt.Sprintf(`{"as":"Codex","worker":"w%d","wait_s":5}`, i))
				if !assert.Equal(t, http.StatusOK, code, raw) {
					return
				}
				if ans.Job != nil {
					assert.Contains(t, ans.Project.Exploration, "/s/")
					mu.Lock()
					taken[ans.Job.ID]++
					n := len(taken)
					mu.Unlock()
					if n == jobs {
						cancel()
					}
				}
			}
		})
	}
	// Bob's agent waits too and gets none of Alice's jobs.
	bobGot := make(chan waitAnswer, 1)
	go func() { _, ans, _ := wait(t, b.testPetal, bobToken, `{"as":"Codex","wait_s":3}`); bobGot <- ans }()
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM agent_workers WHERE owner = $1 AND waiting_until > now()`, owner).Scan(&n))
		return n == waiters
	}, 20*time.Second, 20*time.Millisecond)
	ids := openJobs(t, db, owner, jobs/2)
	ids = append(ids, openJobs(t, db, owner, jobs/2)...)
	wg.Wait()
	require.Len(t, taken, jobs)
	for _, id := range ids {
		assert.Equal(t, 1, taken[id], "job %s", id)
	}
	assert.Nil(t, (<-bobGot).Job, "one person's jobs are never another's")
}

// TestAWaiterThatLeftTakesNothing: a wait whose caller hung up ends, and the
// job opened after it goes to a waiter still there.
func TestAWaiterThatLeftTakesNothing(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	owner, cookie := personOn(t, p)
	token := agentLink(t, p, cookie)
	waiting := func(worker string) bool {
		var n int
		require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM agent_workers WHERE owner = $1 AND worker = $2 AND waiting_until > now()`,
			owner, worker).Scan(&n))
		return n == 1
	}
	ctx, hangUp := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.URL+"/api/v1/agents/wait", strings.NewReader(`{"as":"Codex","worker":"gone","wait_s":60}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	left := make(chan error, 1)
	go func() {
		res, err := http.DefaultClient.Do(req)
		if err == nil {
			res.Body.Close()
		}
		left <- err
	}()
	require.Eventually(t, func() bool { return waiting("gone") }, 10*time.Second, 10*time.Millisecond)
	hangUp()
	require.Error(t, <-left)
	require.Eventually(t, func() bool { return !waiting("gone") }, 10*time.Second, 10*time.Millisecond, "the server saw the caller leave")

	got := make(chan waitAnswer, 1)
	go func() { _, ans, _ := wait(t, p, token, `{"as":"Codex","worker":"here","wait_s":30}`); got <- ans }()
	require.Eventually(t, func() bool { return waiting("here") }, 10*time.Second, 10*time.Millisecond)
	ids := openJobs(t, p.DB, owner, 1)
	ans := <-got
	require.NotNil(t, ans.Job)
	assert.Equal(t, ids[0], ans.Job.ID)
	var worker string
	require.NoError(t, p.DB.Pool.QueryRow(t.Context(), `SELECT worker FROM agent_jobs WHERE id = $1`, ids[0]).Scan(&worker))
	assert.Equal(t, "here", worker)
}

// TestAJobTakenByAReplicaThatDiedGoesBackToOpen: a take committed by a
// process that died before writing its answer is put back by the sweep on
// another replica, and a waiter there takes it.
func TestAJobTakenByAReplicaThatDiedGoesBackToOpen(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	a := startProcess(t, db, nil)
	b := startProcess(t, db, nil)
	owner, cookie := personOn(t, b.testPetal)
	token := agentLink(t, b.testPetal, cookie)
	ids := openJobs(t, db, owner, 1)
	var procA string
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT id FROM processes ORDER BY started_at LIMIT 1`).Scan(&procA))
	// A took the job and died before its answer was written.
	store := postgres.NewAgentJobRepository(db.DB)
	lnk, err := explorations.NewID(rand.Reader, "lnk_")
	require.NoError(t, err)
	_, hash, err := explorations.NewLinkToken(rand.Reader)
	require.NoError(t, err)
	j, err := store.Take(t.Context(), ports.Take{Owner: owner, Agent: "codex", Name: "Codex", N: 1, LinkID: lnk, LinkSHA256: hash, Process: procA, At: time.Now().UTC()})
	require.NoError(t, err)
	require.NotNil(t, j)
	a.kill(t)
	_, err = db.Pool.Exec(t.Context(), `UPDATE processes SET heartbeat_at = now() - interval '31 seconds' WHERE id = $1`, procA)
	require.NoError(t, err)

	code, ans, raw := wait(t, b.testPetal, token, `{"as":"Codex","wait_s":60}`)
	require.Equal(t, http.StatusOK, code, raw)
	require.NotNil(t, ans.Job, "the sweep put it back and woke the waiter")
	assert.Equal(t, ids[0], ans.Job.ID)
	var ended string
	require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT ended FROM agent_job_takes WHERE link_id = $1`, lnk).Scan(&ended))
	assert.Equal(t, "released", ended)
}

// TestAShutdownAnswersTheOpenWaits: a process shutting down answers its open
// waits { job: null } rather than holding its drain on them and cutting them.
func TestAShutdownAnswersTheOpenWaits(t *testing.T) {
	t.Parallel()
	db := pgtest.New(t)
	p := startProcess(t, db, map[string]string{"PETAL_SHUTDOWN_DRAIN_S": "60"})
	owner, cookie := personOn(t, p.testPetal)
	token := agentLink(t, p.testPetal, cookie)
	got := make(chan string, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, p.URL+"/api/v1/agents/wait", strings.NewReader(`{"as":"Codex","wait_s":90}`))
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			got <- err.Error()
			return
		}
		defer res.Body.Close()
		var b strings.Builder
		_, _ = io.Copy(&b, res.Body)
		got <- fmt.Sprint(res.StatusCode, " ", b.String())
	}()
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, db.Pool.QueryRow(t.Context(), `SELECT count(*) FROM agent_workers WHERE owner = $1 AND waiting_until > now()`, owner).Scan(&n))
		return n == 1
	}, 20*time.Second, 20*time.Millisecond)
	require.NoError(t, p.cmd.Process.Signal(syscall.SIGTERM))
	assert.Equal(t, `200 {"tools_version":"1.0.0","job":null}`, <-got)
	_ = p.cmd.Wait()
}

// A wait open on one replica through a link its owner then revokes on
// another takes nothing: the take checks the link as it takes, and the
// revoke wakes the wait, which answers 401 (issue 33, item 3).
func TestARevokedLinksOpenWaitTakesNothing(t *testing.T) {
	t.Parallel()
	a := startPetal(t, nil)
	b := startPetalOn(t, nil, a.DB, a.DB.DB)
	owner, cookie := personOn(t, a)
	token := agentLink(t, a, cookie)
	type answer struct {
		code int
		ans  waitAnswer
		raw  string
	}
	got := make(chan answer, 1)
	go func() {
		code, ans, raw := wait(t, b, token, `{"as":"Codex","wait_s":30}`)
		got <- answer{code, ans, raw}
	}()
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, a.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM agent_workers WHERE owner = $1 AND waiting_until > now()`, owner).Scan(&n))
		return n == 1
	}, 20*time.Second, 20*time.Millisecond, "the wait is open on b")
	res, body := a.do(t, http.MethodPost, "/api/v1/agents/link/revoke", "{}", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	ids := openJobs(t, a.DB, owner, 1)
	var w answer
	select {
	case w = <-got:
	case <-time.After(20 * time.Second):
		t.Fatal("the wait through the revoked link is still open")
	}
	assert.Equal(t, http.StatusUnauthorized, w.code, w.raw)
	assert.Nil(t, w.ans.Job, "a revoked link's wait takes no job")
	var status string
	require.NoError(t, a.DB.Pool.QueryRow(t.Context(), `SELECT status FROM agent_jobs WHERE id = $1`, ids[0]).Scan(&status))
	assert.Equal(t, "open", status, "the job waits for a link that works")
	var links int
	require.NoError(t, a.DB.Pool.QueryRow(t.Context(), `SELECT count(*) FROM exploration_links WHERE revoked_at IS NULL`).Scan(&links))
	assert.Zero(t, links, "no continue link was made for the revoked link")
}
