package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/agentjobsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

// agentsRoutes are a person's own agents (docs/agents.md): the links, made and
// read with the person's session (same-origin), and the wait, which takes an
// agent link as a Bearer token, with open CORS like the other agent routes.
func (s *Server) agentsRoutes() []Route {
	if s.deps.AgentJobs == nil {
		return nil
	}
	const base = "/api/v1/agents"
	return []Route{
		{Method: http.MethodPost, Path: base + "/link", Access: AccessSession, Handler: s.createAgentLink, Answers: answersJSON(agentjobsapp.AgentLinkMade{}),
			Summary: "signed in, same-origin: { id, token, created_at }, the token (petal_agent_…) shown this once; older links keep working"},
		{Method: http.MethodGet, Path: base + "/link", Access: AccessSession, Handler: s.listAgentLinks, Answers: answersJSON(agentLinksBody{}),
			Summary: "signed in: { links: [{ id, created_at }] }, the links that work"},
		{Method: http.MethodPost, Path: base + "/link/revoke", Access: AccessSession, Handler: s.revokeAgentLinks, Body: revokeLinksInput{}, Answers: answersJSON(revokedBody{}),
			Summary: "signed in, same-origin, { id? }: revokes one link, or all: { revoked }"},
		{Method: http.MethodPost, Path: base + "/wait", Handler: s.agentWait, Body: agentjobsapp.WaitInput{}, Answers: answersJSON(agentjobsapp.WaitAnswer{}), Takes: []Credential{AgentLink},
			Fails: []int{http.StatusUnauthorized},
			Summary: "Authorization: Bearer <agent link>, { as, worker?, wait_s?, can? }: waits up to wait_s (50, at most 90) for an open job " +
				"sent to as or to anyone, and takes it: { job, project: { exploration, question }, view }, or { job: null }"},
		{Method: http.MethodGet, Path: base, Access: AccessSession, Handler: s.agentPresence, Answers: answersJSON(presenceBody{}),
			Summary: "signed in: { agents: [{ name, n, worker, waiting, last_seen, can, job }] }, one entry per worker"},
		{Method: http.MethodGet, Path: "/api/v1/explorations/:ref/jobs", Tool: "list_jobs", Access: AccessSession, PathAs: refIsExploration,
			Handler: s.explorationTool("list_jobs", false)},
		{Method: http.MethodGet, Path: "/api/v1/explorations/:ref/live", Access: AccessSession, Handler: s.liveSignal, Answers: []Answer{streamAnswer},
			Summary: "any link or the owner: an event stream with ready, then changed { exploration } for each change to the conversation (a job's state, a report), from any replica; read it again then"},
		{Method: http.MethodPost, Path: "/api/v1/jobs/take", Tool: "take_job"},
		{Method: http.MethodPost, Path: "/api/v1/jobs/:job/report", Tool: "report_job"},
		{Method: http.MethodPost, Path: "/api/v1/jobs/:job/stop", Access: AccessSession, Handler: s.superviseJob("stop"), Body: superviseInput{}, Answers: answersJSON(agentjobsapp.JobState{}),
			Summary: "signed in, same-origin: stops an open or taken job of theirs: { job }; its worker's next call is refused with error.ended stopped"},
		{Method: http.MethodPost, Path: "/api/v1/jobs/:job/retry", Access: AccessSession, Handler: s.superviseJob("retry"), Body: superviseInput{}, Answers: answersJSON(agentjobsapp.JobState{}),
			Summary: "signed in, same-origin: puts a taken, failed or stopped job back as open, for whoever takes it first: { job }; the old worker hears ended handed_over"},
		{Method: http.MethodPost, Path: "/api/v1/jobs/:job/hand-over", Access: AccessSession, Handler: s.superviseJob("hand-over"), Body: superviseInput{}, Answers: answersJSON(agentjobsapp.JobState{}),
			Summary: "signed in, same-origin, { to }: as retry, for the agent named: { job }"},
	}
}

// The bodies the agents routes read and write.
type (
	superviseInput struct {
		To string `json:"to,omitempty"`
	}
	agentLinksBody struct {
		Links []agentjobsapp.AgentLinkView `json:"links"`
	}
	revokeLinksInput struct {
		ID string `json:"id,omitempty"`
	}
	revokedBody struct {
		Revoked int `json:"revoked"`
	}
	presenceBody struct {
		Agents []agentjobsapp.PresenceEntry `json:"agents"`
	}
)

// superviseJob is the person's stop, retry and hand-over of one of their jobs.
func (s *Server) superviseJob(action string) echo.HandlerFunc {
	return func(c echo.Context) error {
		if err := s.checkOrigin(c); err != nil {
			return err
		}
		var in superviseInput
		raw, err := io.ReadAll(c.Request().Body)
		if err != nil {
			return decodeError(err)
		}
		if len(bytes.TrimSpace(raw)) > 0 {
			if err := toolkit.DecodeInput(raw, &in); err != nil {
				return err
			}
		}
		if action != "hand-over" && in.To != "" {
			return errs.New(errs.BadInput, "unknown field to", "only hand-over names an agent")
		}
		out, err := s.deps.AgentJobs.Supervise(c.Request().Context(), s.caller(c), c.Param("job"), action, in.To)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

func (s *Server) createAgentLink(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	if err := s.emptyBody(c); err != nil {
		return err
	}
	out, err := s.deps.AgentJobs.CreateLink(c.Request().Context(), s.caller(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) listAgentLinks(c echo.Context) error {
	links, err := s.deps.AgentJobs.Links(c.Request().Context(), s.caller(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, agentLinksBody{links})
}

func (s *Server) revokeAgentLinks(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	raw, err := io.ReadAll(c.Request().Body)
	if err != nil {
		return decodeError(err)
	}
	var in revokeLinksInput
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := toolkit.DecodeInput(raw, &in); err != nil {
			return err
		}
	}
	n, err := s.deps.AgentJobs.RevokeLinks(c.Request().Context(), s.caller(c), in.ID)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, revokedBody{n})
}

// bearer is the request's Bearer token, or "".
func bearer(c echo.Context) string {
	h := c.Request().Header.Get(echo.HeaderAuthorization)
	if len(h) > 7 && strings.EqualFold(h[:7], "bearer ") {
		return strings.TrimSpace(h[7:])
	}
	return ""
}

// agentWait holds the request open until a job is taken or wait_s passes. A
// job is only taken while the request is open (its context is live), and one
// whose answer could not be written goes back to open.
func (s *Server) agentWait(c echo.Context) error {
	var in agentjobsapp.WaitInput
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	ctx := c.Request().Context()
	ans, err := s.deps.AgentJobs.Wait(ctx, bearer(c), in)
	if err != nil {
		if ctx.Err() != nil {
			return nil // the caller left: there is nobody to answer
		}
		return err
	}
	// Written and flushed is delivered: the request's context may end
	// right after, as the caller, answered, moves on, which says nothing of
	// the answer.
	werr := writeJSON(c, http.StatusOK, ans)
	if werr == nil {
		werr = http.NewResponseController(c.Response().Writer).Flush()
	}
	s.deps.AgentJobs.Answered(ctx, ans, werr)
	return nil
}

func (s *Server) agentPresence(c echo.Context) error {
	agents, err := s.deps.AgentJobs.Presence(c.Request().Context(), s.caller(c))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, presenceBody{agents})
}

// liveViewer writes a conversation's live signal as SSE.
type liveViewer struct{ w *sseWriter }

func (v liveViewer) Changed(exploration string) error {
	return v.w.event("changed", "", map[string]string{"exploration": exploration})
}

func (v liveViewer) Heartbeat() error { return v.w.raw("heartbeat", "", []byte("{}")) }

func (s *Server) liveSignal(c echo.Context) error {
	ctx := c.Request().Context()
	caller := s.caller(c)
	done, err := s.openStream(caller.Address)
	if err != nil {
		return err
	}
	defer done()
	exp, follow, err := s.deps.AgentJobs.Live(ctx, caller, c.Param("ref"))
	if err != nil {
		return err
	}
	defer s.streaming("live")()
	c.Response().Header().Set("Cache-Control", "no-store")
	v := liveViewer{w: newSSE(c)}
	if err := v.w.event("ready", "", map[string]string{"exploration": exp}); err != nil {
		return follow(nil)
	}
	// The stream ends with its link: the refusal is its last event.
	if e, ok := errs.As(follow(v)); ok {
		_ = v.w.event("error", "", e.Detail())
	}
	return nil
}
