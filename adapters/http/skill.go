package httpapi

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/domain/errs"
)

// skillRoutes: GET /skill.md, the document a person gives their own agent,
// kept on a public site too (every refusal's hint points to it). Open CORS,
// so an agent in a browser can read it.
func (s *Server) skillRoutes() []Route {
	return []Route{
		{Method: http.MethodGet, Path: "/skill.md", Access: AccessOpen, Head: true, Sessionless: true, Handler: s.serveSkill, Answers: []Answer{markdownAnswer, notModified},
			Summary: "the skill for a person's own agent, as Markdown: what Petal is, how to connect (MCP, the agent link and the wait loop), " +
				"every tool with its purpose, the limits and what each refusal means; generated from the tool registry, ETag"},
	}
}

// renderSkill renders the skill once the route table is complete: the tools
// are the registry's, each with its route, and the refusals the codes this
// door maps. A code without a meaning is a programming error, found at
// start-up.
func (s *Server) renderSkill() {
	door := siteapp.SkillDoor{Routes: map[string]string{}, Statuses: map[errs.Code]int{},
		BodyLimit: DefaultBodyLimit, ChatBodyLimit: ChatBodyLimit,
		PostedWireLimit: PostedReadingWireLimit, PostedInflatedLimit: PostedReadingInflatedLimit}
	for _, r := range s.routes {
		if _, seen := door.Routes[r.Tool]; r.Tool != "" && !seen {
			door.Routes[r.Tool] = r.Method + " " + r.Path
		}
	}
	for code, status := range statusOf {
		door.Statuses[code] = status
	}
	skill, err := siteapp.RenderSkill(s.deps.Config, s.deps.Registry, door)
	if err != nil {
		panic("httpapi: " + err.Error())
	}
	s.skill = skill
}

func (s *Server) serveSkill(c echo.Context) error {
	h := c.Response().Header()
	// The document changes only with a new build or configuration: an hour
	// of caching, then a revalidation by its ETag.
	h.Set("Cache-Control", "public, max-age=3600")
	h.Set("ETag", s.skill.ETag)
	h.Set("X-Content-Type-Options", "nosniff")
	if etagMatches(c.Request().Header.Get("If-None-Match"), s.skill.ETag) {
		return c.NoContent(http.StatusNotModified)
	}
	return c.Blob(http.StatusOK, "text/markdown; charset=utf-8", s.skill.Body)
}
