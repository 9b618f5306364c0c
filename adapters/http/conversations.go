package httpapi

import (
	"net/http"
	"strconv"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/agentapp"
	"github.com/petal-near/petal/domain/conversations"
	"github.com/petal-near/petal/domain/errs"
)

// conversationRoutes: the session's (or person's) runs and explorations as
// one list. It reads the session cookie: no CORS, never cached.
func (s *Server) conversationRoutes() []Route {
	if s.deps.Conversations == nil {
		return nil
	}
	return []Route{
		{Method: http.MethodGet, Path: "/api/v1/conversations", Access: AccessSession, Handler: s.listConversations, Query: []string{"limit", "cursor"}, Answers: answersJSON(agentapp.ConversationPage{}), Takes: []Credential{Anyone, Session},
			Summary: "the session's or person's runs and explorations as one list, newest activity first: " +
				"{ conversations: [{ id, kind, title, updated_at, status, exploration? }], next_cursor }; ?limit= (1 to 100, default 20), ?cursor= the next_cursor of the page before"},
	}
}

func (s *Server) listConversations(c echo.Context) error {
	var limit int
	var cursor string
	for name, vs := range c.QueryParams() {
		if name != "limit" && name != "cursor" {
			return errs.Newf(errs.BadInput, "unknown query parameter %s", name).WithHint("a page of conversations is ?limit=<n>&cursor=<next_cursor>")
		}
		if len(vs) != 1 {
			return errs.Newf(errs.BadInput, "query parameter %s is given more than once", name)
		}
		if name == "cursor" {
			cursor = vs[0]
			continue
		}
		n, err := strconv.Atoi(vs[0])
		if err != nil || n < 1 || n > conversations.MaxLimit {
			return errs.Newf(errs.BadInput, "query parameter limit must be a whole number from 1 to %d, not %q", conversations.MaxLimit, vs[0])
		}
		limit = n
	}
	page, err := s.deps.Conversations.List(c.Request().Context(), s.caller(c), limit, cursor)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, page)
}
