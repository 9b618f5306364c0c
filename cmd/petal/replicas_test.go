package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/agentapp"
	"github.com/petal-near/petal/domain/runs"
)

var (
	binaryOnce sync.Once
	binaryPath string
	binaryErr  error
)

// petalBinary builds the real binary once per test run.
func petalBinary(t testing.TB) string {
	t.Helper()
	binaryOnce.Do(func() {
		dir, err := os.MkdirTemp("", "petal-bin-")
		if err != nil {
			binaryErr = err
			return
		}
		binaryPath = filepath.Join(dir, "petal")
		out, err := exec.Command("go", "build", "-o", binaryPath, ".").CombinedOutput()
		if err != nil {
			binaryErr = fmt.Errorf("go build: %v: %s", err, out)
		}
	})
	if binaryErr != nil {
		t.Fatal(binaryErr)
	}
	return binaryPath
}

// petalProcess is `petal serve` running as its own OS process.
type petalProcess struct {
	*testPetal
	cmd  *exec.Cmd
	logs *lockedBuffer
}

// startProcess runs `petal serve` on db as a separate process and waits for
// its health to answer.
func startProcess(t testing.TB, db *pgtest.DB, env map[string]string) *petalProcess {
	t.Helper()
	return startBinary(t, petalBinary(t), db, env)
}

// startBinary is startProcess with the binary bin.
func startBinary(t testing.TB, bin string, db *pgtest.DB, env map[string]string) *petalProcess {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.Command(bin, "serve")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+db.URL, "PETAL_ADDR="+addr, "PETAL_LOG_FORMAT=json", "NEAR_AI_API_KEY=")
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	logs := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	require.NoError(t, cmd.Start())
	p := &petalProcess{testPetal: &testPetal{URL: "http://" + addr, DB: db}, cmd: cmd, logs: logs}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			_ = cmd.Wait()
		}
		if t.Failed() {
			t.Logf("petal at %s said:\n%s", addr, logs.String())
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		res, err := http.Get(p.URL + "/api/v1/health")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return p
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("petal serve did not answer within 30 s:\n%s", logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends the process at once, as a crash would: no shutdown, no lease
// given back.
func (p *petalProcess) kill(t *testing.T) {
	t.Helper()
	require.NoError(t, p.cmd.Process.Kill())
	_ = p.cmd.Wait()
}

func startRun(t *testing.T, p *testPetal) string {
	t.Helper()
	res, body := p.do(t, http.MethodPost, "/api/v1/agent/chat", drawIt, "Accept", "application/json")
	require.Equal(t, http.StatusAccepted, res.StatusCode, body)
	var started map[string]string
	require.NoError(t, json.Unmarshal([]byte(body), &started))
	return started["run_id"]
}

func TestRunStartedOnOneProcessIsWatchedAndStoppedFromAnother(t *testing.T) {
	t.Parallel() // its own database (and proxy or processes): it waits, mostly, so others run meanwhile
	db := pgtest.New(t)
	env := map[string]string{"PETAL_RECORDED_PACE_MS": "1500"}
	a := startProcess(t, db, env)
	b := startProcess(t, db, env)
	id := startRun(t, a.testPetal)

	// A viewer on B follows A's run live.
	view := b.openSSE(t, http.MethodGet, "/api/v1/agent/runs/"+id, "")
	seen := []sseEvent{}
	for {
		ev, ok := view.next(t)
		require.True(t, ok, "B's stream ended early")
		seen = append(seen, ev)
		if ev.Name == "tool_call" {
			break // a live event from A's job, seen on B
		}
	}
	res, body := b.do(t, http.MethodPost, "/api/v1/agent/runs/"+id+"/stop", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","run_id":"`+id+`","status":"stopped","stopped":true,"already_finished":false}`, body)

	seen = append(seen, view.rest(t)...)
	var stored []string
	for _, e := range seen {
		if e.Name != "live" {
			stored = append(stored, e.Name)
		}
	}
	require.GreaterOrEqual(t, len(stored), 4)
	assert.Equal(t, "run", stored[0])
	assert.Equal(t, []string{"error", "done"}, stored[len(stored)-2:])
	last := seen[len(seen)-2]
	assert.Equal(t, "stopped", last.json(t)["code"])
}

func TestRestartInterruptsTheRunsOfAProcessThatDied(t *testing.T) {
	t.Parallel() // its own database (and proxy or processes): it waits, mostly, so others run meanwhile
	db := pgtest.New(t)
	env := map[string]string{"PETAL_RECORDED_PACE_MS": "60000"}
	first := startProcess(t, db, env)
	id := startRun(t, first.testPetal)
	store := postgres.NewRunRepository(db.DB)
	run, err := store.Get(t.Context(), id)
	require.NoError(t, err)
	require.Equal(t, runs.Running, run.Status)

	// A second live process leaves the first one's run alone.
	other := startProcess(t, db, env)
	run, err = store.Get(t.Context(), id)
	require.NoError(t, err)
	assert.Equal(t, runs.Running, run.Status, "a live process's run is left alone")

	first.kill(t)
	// Hold the sweep's lease, so the live process's scheduled sweep can't end
	// the run before the stop below looks at it.
	jobs := postgres.NewJobLeases(db.DB)
	require.Eventually(t, func() bool {
		held, err := jobs.Claim(t.Context(), agentapp.SweepJob(nil, nil, nil).Name, "proc_test", time.Hour)
		require.NoError(t, err)
		return held
	}, time.Minute, 50*time.Millisecond)
	// The dead process's lease lapses (its heartbeat ages past 30 s).
	_, err = db.Pool.Exec(context.Background(), `UPDATE processes SET heartbeat_at = now() - interval '31 seconds' WHERE id = $1`, run.ProcessID)
	require.NoError(t, err)
	// Running, and no job holds it: a stop can say neither.
	res, body := other.do(t, http.MethodPost, "/api/v1/agent/runs/"+id+"/stop", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","run_id":"`+id+`","status":"running","stopped":false,"already_finished":false}`, body)

	// A process that shuts down ends its own runs as interrupted.
	mine := startRun(t, other.testPetal)
	require.NoError(t, other.cmd.Process.Signal(syscall.SIGTERM))
	_ = other.cmd.Wait()
	run, err = store.Get(t.Context(), mine)
	require.NoError(t, err)
	assert.Equal(t, runs.Interrupted, run.Status)

	second := startProcess(t, db, env)
	res, body = second.do(t, http.MethodGet, "/api/v1/agent/runs/"+id, "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var got struct {
		Status string       `json:"status"`
		Events []runs.Event `json:"events"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	assert.Equal(t, "interrupted", got.Status)
	last := got.Events[len(got.Events)-1]
	assert.Equal(t, runs.KindError, last.Kind)
	assert.JSONEq(t, `"interrupted"`, jsonField(t, last.Data, "code"))
	for _, e := range got.Events {
		assert.NotEqual(t, runs.KindDone, e.Kind, "no done follows an interruption")
	}

	// Stopping it now only says how it ended.
	res, body = second.do(t, http.MethodPost, "/api/v1/agent/runs/"+id+"/stop", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.JSONEq(t, `{"tools_version":"1.0.0","run_id":"`+id+`","status":"interrupted","stopped":false,"already_finished":true}`, body)

	// It carries on from its saved thread.
	s := second.openSSE(t, http.MethodPost, "/api/v1/agent/chat", `{"run_id":"`+id+`","messages":[{"role":"user","content":"go on"}]}`)
	ev, ok := s.next(t)
	require.True(t, ok)
	assert.Equal(t, "run", ev.Name)
}

func jsonField(t *testing.T, data json.RawMessage, key string) string {
	t.Helper()
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &m))
	return string(m[key])
}
