package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// endsWithin reads a stream's events until the server ends it, or d passes
// (ended false).
func (s *sseStream) endsWithin(d time.Duration) (events []sseEvent, ended bool) {
	deadline := time.After(d)
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return events, true
			}
			if ev.Name != "heartbeat" {
				events = append(events, ev)
			}
		case <-deadline:
			return events, false
		}
	}
}

// A conversation's /live stream opened with a link ends with the link: a
// worker's stream when its job is stopped, a read link's when it is
// revoked, each on another replica than the stream's; the owner's stream
// goes on (issue 33, item 6).
func TestLiveStreamsEndWithTheirLink(t *testing.T) {
	t.Parallel()
	a := startPetal(t, nil)
	b := startPetalOn(t, nil, a.DB, a.DB.DB)
	owner, cookie := personOn(t, a)
	token := agentLink(t, a, cookie)
	openJobs(t, a.DB, owner, 1)
	code, ans, raw := wait(t, a, token, `{"as":"Codex","wait_s":5}`)
	require.Equal(t, http.StatusOK, code, raw)
	require.NotNil(t, ans.Job, raw)
	conv := ans.Job.Conversation
	workerToken := ans.Project.Exploration[strings.LastIndex(ans.Project.Exploration, "/s/")+3:]

	res, body := a.do(t, http.MethodPost, "/api/v1/explorations/"+conv+"/links", `{"scope":"read"}`, "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var read struct{ ID, URL string }
	require.NoError(t, json.Unmarshal([]byte(body), &read))
	readToken := read.URL[strings.LastIndex(read.URL, "/s/")+3:]

	open := func(ref string, headers ...string) *sseStream {
		s := b.openSSE(t, http.MethodGet, "/api/v1/explorations/"+ref+"/live", "", headers...)
		ev, ok := s.next(t)
		require.True(t, ok)
		require.Equal(t, "ready", ev.Name)
		return s
	}
	worker, reader, owners := open(workerToken), open(readToken), open(conv, "Cookie", cookie)

	lastError := func(evs []sseEvent) map[string]any {
		require.NotEmpty(t, evs)
		last := evs[len(evs)-1]
		require.Equal(t, "error", last.Name, "%+v", evs)
		return last.json(t) // the error event carries the error's detail, as a tool stream's does
	}
	res, body = a.do(t, http.MethodPost, "/api/v1/jobs/"+ans.Job.ID+"/stop", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	evs, ended := worker.endsWithin(10 * time.Second)
	require.True(t, ended, "the worker's stream outlives its stopped job: %+v", evs)
	e := lastError(evs)
	assert.Equal(t, "unauthorised", e["code"])
	assert.Equal(t, "this job was stopped", e["message"])

	res, body = a.do(t, http.MethodPost, "/api/v1/explorations/"+conv+"/links/"+read.ID+"/revoke", "", "Cookie", cookie)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	evs, ended = reader.endsWithin(10 * time.Second)
	require.True(t, ended, "the read link's stream outlives its revoke: %+v", evs)
	assert.Equal(t, "not_found", lastError(evs)["code"])

	// The owner's stream, by id, saw the changes and goes on.
	evs, ended = owners.endsWithin(time.Second)
	assert.False(t, ended, "the owner's stream goes on")
	assert.NotEmpty(t, evs, "the owner's stream heard the stop and the revoke")
}
