package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/explorationsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
)

// Exploration routes read the session cookie: no CORS headers, never cached,
// and a POST from another site is unauthorised. :ref is an exploration's id
// or a link's token; link management takes the id and the owner's session.
func (s *Server) explorationRoutes() []Route {
	if s.deps.Explorations == nil {
		return nil
	}
	const base = "/api/v1/explorations"
	return []Route{
		{Method: http.MethodGet, Path: base, Tool: "list_explorations", Access: AccessSession, Handler: s.explorationTool("list_explorations", false)},
		{Method: http.MethodPost, Path: base, Tool: "start_exploration", Access: AccessSession, Handler: s.explorationTool("start_exploration", true)},
		{Method: http.MethodGet, Path: base + "/:ref", Tool: "get_exploration", Access: AccessSession, PathAs: refIsExploration, Handler: s.explorationTool("get_exploration", false)},
		{Method: http.MethodPost, Path: base + "/:ref/steps", Tool: "save_step", Access: AccessSession, PathAs: refIsExploration, Handler: s.explorationTool("save_step", true)},
		{Method: http.MethodPost, Path: base + "/:ref/notes", Tool: "add_note", Access: AccessSession, PathAs: refIsExploration, Handler: s.explorationTool("add_note", true)},
		{Method: http.MethodPost, Path: base + "/:ref/claim", Access: AccessSession, Handler: s.claimExploration, Answers: answersJSON(explorationsapp.Claimed{}), Takes: []Credential{Anyone, Session},
			Summary: "a session takes an unowned exploration with its continue link: { exploration, claimed }"},
		{Method: http.MethodGet, Path: base + "/:ref/links", Access: AccessSession, Handler: s.listLinks, Query: []string{"cursor", "limit"}, Answers: answersJSON(explorationsapp.LinkPage{}), Takes: []Credential{Session},
			Summary: "owner only, ?cursor=&limit= (1 to 200, 100 when not given): { links: [{ id, scope, created_at, revoked_at }], next_cursor }, " +
				"the oldest first, with no tokens"},
		{Method: http.MethodPost, Path: base + "/:ref/links", Access: AccessSession, Handler: s.createLink, Body: createLinkInput{}, Answers: answersJSON(explorationsapp.NewLink{}), Takes: []Credential{Session},
			Summary: `owner only, body { scope: "read" | "continue" }: { id, scope, url, created_at }, its token shown this once; ` +
				`409 conflict when the exploration already has 100 links not revoked`},
		{Method: http.MethodPost, Path: base + "/:ref/links/:link/revoke", Access: AccessSession, Handler: s.revokeLink, Answers: answersJSON(explorationsapp.LinkView{}), Takes: []Credential{Session},
			Summary: "owner only: { id, scope, created_at, revoked_at }; the link stops working at once"},
		{Method: http.MethodPut, Path: base + "/:ref/snapshots/:sha256", Access: AccessSession, Handler: s.postReading, BodyLimit: PostedReadingWireLimit, Answers: answersJSON(explorationsapp.PostedReading{}),
			Fails: []int{http.StatusRequestEntityTooLarge},
			Summary: "a reading made on the person's own machine (owner or continue link): the snapshot JSON, Content-Encoding: gzip allowed, " +
				"2 MiB on the wire and 32 MiB inflated, named by the SHA-256 of its canonical JSON: { exploration, sha256, stored, origin }"},
		{Method: http.MethodGet, Path: "/s/:token", Access: AccessPlain, Handler: s.resumePacket, Answers: append([]Answer{plainAnswer}, plainErrors(http.StatusBadRequest, http.StatusNotFound, http.StatusTooManyRequests, http.StatusServiceUnavailable)...),
			Takes:   []Credential{LinkToken},
			Summary: "a link's resume packet as markdown (text/plain, no-store), for an agent that can only fetch a URL; plain-text 404 for anything else"},
	}
}

// refIsExploration: the path's :ref is the tools' exploration field.
var refIsExploration = map[string]string{"ref": "exploration"}

// explorationTool is the door onto an exploration tool. A write checks the
// Origin, and gets an anonymous session for a caller without one, so the
// exploration it makes has an owner who can share it later; the tool opens
// it once the limit, the input and access have passed (app.Caller.Own).
func (s *Server) explorationTool(tool string, write bool) echo.HandlerFunc {
	return func(c echo.Context) error {
		if write {
			if err := s.checkOrigin(c); err != nil {
				return err
			}
		}
		t, ok := s.deps.Registry.Get(tool)
		if !ok {
			return errs.Newf(errs.Internal, "no tool %s", tool)
		}
		raw, err := s.toolInput(c, t, Route{})
		if err != nil {
			return err
		}
		var input map[string]json.RawMessage
		if err := json.Unmarshal(raw, &input); err != nil {
			return errs.New(errs.BadInput, "the body must be a JSON object")
		}
		if ref, ok := input["ref"]; ok {
			if _, inBody := input["exploration"]; inBody {
				return errs.New(errs.BadInput, "unknown field exploration", "the exploration comes from the path")
			}
			delete(input, "ref")
			input["exploration"] = ref
		}
		raw, _ = json.Marshal(input)
		caller := s.caller(c)
		if write {
			caller = s.sessionOpener(c, caller)
		}
		call := toolkit.Call{Input: raw, Caller: caller, IdempotencyKey: c.Request().Header.Get("Idempotency-Key")}
		out, err := s.deps.Registry.Call(c.Request().Context(), tool, call)
		if err != nil {
			return err
		}
		return writeJSON(c, http.StatusOK, out)
	}
}

func (s *Server) claimExploration(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	if err := s.emptyBody(c); err != nil {
		return err
	}
	// The session is opened only for a ref that opens something to claim.
	out, err := s.deps.Explorations.Claim(c.Request().Context(), s.sessionOpener(c, s.caller(c)), c.Param("ref"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) listLinks(c echo.Context) error {
	limit := 0
	if raw := c.QueryParam("limit"); raw != "" {
		n, err := strconv.Atoi(raw)
		if err != nil || n < 1 {
			return errs.Newf(errs.BadInput, "limit must be between 1 and %d", explorations.MaxLinkPage)
		}
		limit = n
	}
	page, err := s.deps.Explorations.Links(c.Request().Context(), s.caller(c), c.Param("ref"), c.QueryParam("cursor"), limit)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, page)
}

type createLinkInput struct {
	Scope string `json:"scope" jsonschema:"read or continue"`
}

func (s *Server) createLink(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	var in createLinkInput
	if err := decodeBody(c, &in); err != nil {
		return err
	}
	out, err := s.deps.Explorations.CreateLink(c.Request().Context(), s.caller(c), c.Param("ref"), in.Scope, s.siteBase())
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) revokeLink(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	if err := s.emptyBody(c); err != nil {
		return err
	}
	out, err := s.deps.Explorations.RevokeLink(c.Request().Context(), s.caller(c), c.Param("ref"), c.Param("link"))
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

func (s *Server) postReading(c echo.Context) error {
	if err := s.checkOrigin(c); err != nil {
		return err
	}
	// The per-address limit comes before anything is read.
	if s.deps.Registry != nil {
		if err := s.deps.Registry.Limit(c.Request().Context(), ClientAddress(c.Request(), s.deps.Config.Public, s.deps.Config.TrustedProxies)); err != nil {
			return err
		}
	}
	// The body is read on first Open, after the access check and the daily
	// cap, so a caller without access learns nothing from how its body is
	// refused, and a refused one costs no reading.
	body := &postedBody{c: c}
	out, err := s.deps.Explorations.PostReading(c.Request().Context(), s.caller(c), c.Param("ref"), c.Param("sha256"), body)
	if err != nil {
		return err
	}
	return writeJSON(c, http.StatusOK, out)
}

// postedBody holds a posted reading's wire bytes (at most the route's 2 MiB,
// which limitBody enforces) and opens them as many times as the app asks,
// inflating a gzip body afresh each time within PostedReadingInflatedLimit.
type postedBody struct {
	c    echo.Context
	wire []byte
	read bool
	err  error
}

func (b *postedBody) Open() (io.ReadCloser, error) {
	if !b.read {
		b.read = true
		b.wire, b.err = io.ReadAll(b.c.Request().Body)
	}
	if b.err != nil {
		return nil, b.err
	}
	switch enc := strings.ToLower(strings.TrimSpace(b.c.Request().Header.Get(echo.HeaderContentEncoding))); enc {
	case "", "identity":
		return io.NopCloser(bytes.NewReader(b.wire)), nil
	case "gzip", "x-gzip":
		return NewGzipBodyReader(bytes.NewReader(b.wire), PostedReadingInflatedLimit)
	default:
		return nil, errs.Newf(errs.BadInput, "Content-Encoding %s is not accepted", enc).WithHint("send the body plain or gzip")
	}
}

// resumePacket answers /s/:token in plain text whatever happens, since what
// fetches it may read nothing else.
func (s *Server) resumePacket(c echo.Context) error {
	h := c.Response().Header()
	h.Set("Cache-Control", "no-store")
	// Plain text, never sniffed as HTML: the packet quotes people's text.
	h.Set("X-Content-Type-Options", "nosniff")
	cursor := ""
	for name, vs := range c.QueryParams() {
		if name != "cursor" || len(vs) != 1 {
			return c.String(http.StatusBadRequest, "the only query parameter is cursor, once\n")
		}
		cursor = vs[0]
	}
	md, err := s.deps.Explorations.ResumePacket(c.Request().Context(), c.Param("token"), s.siteBase(), cursor)
	if err != nil {
		e := toPetalError(err)
		if e.Code != errs.NotFound {
			if e.Code == errs.Internal {
				s.deps.Log.ErrorContext(c.Request().Context(), "resume packet", "err", err)
			}
			return c.String(StatusOf(e.Code), e.Message+"\n")
		}
		return c.String(http.StatusNotFound, "not found\n")
	}
	return c.Blob(http.StatusOK, echo.MIMETextPlainCharsetUTF8, []byte(md))
}

// emptyBody refuses a body on a route that takes none (nothing, or an empty
// JSON object, is fine).
func (s *Server) emptyBody(c echo.Context) error {
	b := c.Request().Body
	if b == nil || b == http.NoBody {
		return nil
	}
	raw, err := io.ReadAll(b)
	if err != nil {
		return decodeError(err)
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	var none struct{}
	return toolkit.DecodeInput(raw, &none)
}

// siteBase is the site's address for links and packets: PETAL_API, else ""
// so they are relative to the site. The request's Host is never used: anyone
// can send one, and a link built on it would point wherever they like.
func (s *Server) siteBase() string {
	return s.deps.Config.PublicURL
}
