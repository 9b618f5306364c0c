package httpapi

import (
	"encoding/json"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/agentapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/runs"
)

// agentRoutes are Petals' agent's routes: chat, runs, stop and attestation
// reports. Open CORS, like the tools: a browser never carries a session
// across origins, since no credentials are allowed.
func (s *Server) agentRoutes() []Route {
	return []Route{
		{Method: http.MethodPost, Path: "/api/v1/agent/chat", Access: AccessOpen, BodyLimit: ChatBodyLimit, Handler: s.chat, Body: agentapp.ChatRequest{}, Fails: []int{http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden, http.StatusConflict},
			Answers: []Answer{streamAnswer, {Status: http.StatusAccepted, JSON: agentapp.ChatStarted{}, Says: "the run started (Accept: application/json)"}},
			Summary: "Petals' agent: a chat is a run; SSE of its events, or 202 { run_id, status } with Accept: application/json alone"},
		{Method: http.MethodPost, Path: "/api/v1/agent/quote", Access: AccessOpen, BodyLimit: ChatBodyLimit, Handler: s.quoteChat, Body: agentapp.QuoteRequest{}, Answers: answersJSON(agentapp.QuoteBody{}), Fails: []int{http.StatusUnauthorized, http.StatusPaymentRequired, http.StatusForbidden},
			Summary: "prices a chat before it starts, spending nothing: { quote: { id, expires_at, payer, max_usd, line_items, fees, tip_usd, limits, left_usd } }; quote_id on a chat binds it"},
		{Method: http.MethodGet, Path: "/api/v1/agent/runs/:id", Access: AccessOpen, Handler: s.getRun, Query: []string{"from", "limit"}, Answers: []Answer{{JSON: runBody{}, Says: "the run and a page of its events"}, streamAnswer},
			Summary: "a stored run; with Accept: text/event-stream, its events from the cursor (Last-Event-ID or ?from=), a live marker, then live events until it ends"},
		{Method: http.MethodPost, Path: "/api/v1/agent/runs/:id/stop", Access: AccessOpen, Handler: s.stopRun, Answers: answersJSON(agentapp.StopResult{}), Fails: []int{http.StatusUnauthorized},
			Summary: "stops a run and answers once it has ended: { run_id, status, stopped, already_finished }"},
		{Method: http.MethodGet, Path: "/api/v1/attestations/:sha256", Access: AccessOpen, Handler: s.attestation, Answers: []Answer{{Media: "application/json", Says: "the report, byte for byte as NEAR AI gave it"}, notModified},
			Summary: "a NEAR AI attestation report Petal stored, byte for byte, by its SHA-256"},
	}
}

func (s *Server) chat(c echo.Context) error {
	agent := s.deps.Agent
	real := !agent.Recorded()
	if real {
		if err := s.checkOrigin(c); err != nil {
			return err
		}
	}
	var req agentapp.ChatRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	caller := s.caller(c)
	if !acceptsJSONOnly(c.Request()) {
		// A stream refused starts no chat and opens no session.
		done, err := s.openStream(caller.Address)
		if err != nil {
			return err
		}
		defer done()
	}
	if real && !s.deps.Config.Public {
		// A chat on a real model is owned by the session's subject; the agent
		// opens one for a caller without it once the gate and the limit pass.
		caller = s.sessionOpener(c, caller)
	}
	started, err := agent.Chat(c.Request().Context(), caller, req)
	if err != nil {
		return err
	}
	if acceptsJSONOnly(c.Request()) {
		return writeJSON(c, http.StatusAccepted, started)
	}
	defer s.streaming("run")()
	v := &sseViewer{w: newSSE(c)}
	// The chat's own stream starts at its first event and has no live marker.
	return agent.Follow(c.Request().Context(), started.RunID, started.FirstSeq, v)
}

func (s *Server) quoteChat(c echo.Context) error {
	var req agentapp.QuoteRequest
	if err := decodeBody(c, &req); err != nil {
		return err
	}
	out, err := s.deps.Agent.Quote(c.Request().Context(), s.caller(c), req)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// runBody is GET /api/v1/agent/runs/:id as JSON.
type runBody struct {
	RunID    string         `json:"run_id"`
	Status   runs.Status    `json:"status"`
	Messages []runs.Message `json:"messages"`
	Events   []runs.Event   `json:"events"`
	// NextFrom is where the next page of events starts (?from=), null when
	// events holds the last stored one.
	NextFrom    *int64          `json:"next_from"`
	Flower      json.RawMessage `json:"flower,omitempty"`
	Exploration json.RawMessage `json:"exploration,omitempty"`
	// Title (additive) is the conversation's name, once Petals' agent gave
	// one; Settings (additive) what its chats run on, once it picked.
	Title    string         `json:"title,omitempty"`
	Settings *runs.Settings `json:"settings,omitempty"`
}

func (s *Server) getRun(c echo.Context) error {
	ctx := c.Request().Context()
	id := c.Param("id")
	stream := acceptsEventStream(c.Request())
	var from int64
	if stream {
		var err error
		if from, err = runCursor(c); err != nil {
			return err
		}
	}
	var limit int
	if !stream {
		var err error
		if from, limit, err = eventsPage(c); err != nil {
			return err
		}
	}
	caller := s.caller(c)
	run, err := s.deps.Agent.Run(ctx, caller, id)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "no-store")
	if stream {
		done, err := s.openStream(caller.Address)
		if err != nil {
			return err
		}
		defer done()
		defer s.streaming("run")()
		v := &sseViewer{w: newSSE(c), marker: true, next: from}
		v.w.start()
		return s.deps.Agent.Follow(ctx, run.ID, from, v)
	}
	events, next, err := s.deps.Agent.EventsPage(ctx, run.ID, from, limit)
	if err != nil {
		return err
	}
	body := runBody{RunID: run.ID, Status: run.Status, Messages: runs.Conversation(run.Thread), Events: events, NextFrom: next}
	if len(run.Flower) > 0 {
		body.Flower = run.Flower
	}
	if run.Exploration != "" {
		body.Exploration, _ = json.Marshal(map[string]string{"id": run.Exploration})
	}
	body.Title = run.Title
	if run.Settings != (runs.Settings{}) {
		body.Settings = &run.Settings
	}
	return writeJSON(c, http.StatusOK, body)
}

// eventsPage reads a JSON read's page of events: ?from=<seq> (default 0)
// and ?limit= (default app.DefaultEventsPage, at most app.MaxEventsPage).
func eventsPage(c echo.Context) (from int64, limit int, err error) {
	limit = agentapp.DefaultEventsPage
	for name, vs := range c.QueryParams() {
		if name != "from" && name != "limit" {
			return 0, 0, errs.Newf(errs.BadInput, "unknown query parameter %s", name).WithHint("a page of events is ?from=<seq>&limit=<n>")
		}
		if len(vs) != 1 {
			return 0, 0, errs.Newf(errs.BadInput, "query parameter %s is given more than once", name)
		}
		n, perr := strconv.ParseInt(vs[0], 10, 64)
		switch {
		case name == "from" && (perr != nil || n < 0):
			return 0, 0, errs.Newf(errs.BadInput, "query parameter from must be a seq (a whole number, 0 or more), not %q", vs[0])
		case name == "from":
			from = n
		case perr != nil || n < 1 || n > agentapp.MaxEventsPage:
			return 0, 0, errs.Newf(errs.BadInput, "query parameter limit must be a whole number from 1 to %d, not %q", agentapp.MaxEventsPage, vs[0])
		default:
			limit = int(n)
		}
	}
	return from, limit, nil
}

// runCursor reads where a replay starts: Last-Event-ID n starts after n,
// ?from=n starts at n, and the header wins. Anything malformed is 400 before
// the stream starts.
func runCursor(c echo.Context) (int64, error) {
	for name := range c.QueryParams() {
		if name != "from" {
			return 0, errs.Newf(errs.BadInput, "unknown query parameter %s", name).WithHint("the cursor is ?from=<seq> or Last-Event-ID")
		}
	}
	if h, ok := c.Request().Header["Last-Event-Id"]; ok {
		v := strings.TrimSpace(strings.Join(h, ","))
		n, err := strconv.ParseInt(v, 10, 64)
		if err != nil || n < 0 {
			return 0, errs.Newf(errs.BadInput, "Last-Event-ID must be an event's seq (a whole number, 0 or more), not %q", v)
		}
		return n + 1, nil
	}
	if vs, ok := c.QueryParams()["from"]; ok {
		if len(vs) != 1 {
			return 0, errs.New(errs.BadInput, "query parameter from is given more than once")
		}
		n, err := strconv.ParseInt(vs[0], 10, 64)
		if err != nil || n < 0 {
			return 0, errs.Newf(errs.BadInput, "query parameter from must be a seq (a whole number, 0 or more), not %q", vs[0])
		}
		return n, nil
	}
	return 0, nil
}

func (s *Server) stopRun(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	res, err := s.deps.Agent.Stop(c.Request().Context(), s.caller(c), c.Param("id"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, res)
}

func (s *Server) attestation(c echo.Context) error {
	sha := c.Param("sha256")
	body, err := s.deps.Agent.Attestation(c.Request().Context(), sha)
	if err != nil {
		return err
	}
	h := c.Response().Header()
	h.Set("Cache-Control", "public, max-age=31536000, immutable")
	h.Set("ETag", `"`+sha+`"`)
	if match := c.Request().Header.Get("If-None-Match"); match == `"`+sha+`"` {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, "application/json", body)
}

// acceptsJSONOnly is Accept: application/json alone.
func acceptsJSONOnly(r *http.Request) bool {
	accept := strings.TrimSpace(r.Header.Get(echo.HeaderAccept))
	if accept == "" || strings.Contains(accept, ",") {
		return false
	}
	mt, _, err := mime.ParseMediaType(accept)
	return err == nil && mt == "application/json"
}

// sseViewer writes a run's events as SSE: each stored event with its seq as
// id, heartbeats and the live marker with none.
type sseViewer struct {
	w      *sseWriter
	marker bool // send the live marker after the replay
	next   int64
}

var _ agentapp.FrameViewer = (*sseViewer)(nil)

func (v *sseViewer) Event(e runs.Event) error { return v.Frame(e, v.Encode(e)) }

// Encode is e's SSE frame, the same for every viewer, so a run's viewers
// share one (app.FrameViewer).
func (v *sseViewer) Encode(e runs.Event) []byte {
	return sseFrame(string(e.Kind), strconv.FormatInt(e.Seq, 10), withToolsVersion(e.Data))
}

func (v *sseViewer) Frame(e runs.Event, wire []byte) error {
	v.next = e.Seq + 1
	return v.w.write(wire)
}

func (v *sseViewer) CaughtUp() error {
	if !v.marker {
		return nil
	}
	return v.w.event("live", "", map[string]int64{"next_seq": v.next})
}

func (v *sseViewer) Heartbeat() error {
	return v.w.event(string(runs.KindHeartbeat), "", struct{}{})
}
