// Package httpapi is petal's HTTP door, on Echo: the route table, strict
// decoding, the error body, body limits, CORS, rate limits, sessions and SSE.
// Handlers stay thin: they turn a request into a call on app and back.
package httpapi

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/agentapp"
	"github.com/petal-near/petal/app/agentjobsapp"
	"github.com/petal-near/petal/app/annotationsapp"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/explorationsapp"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/mapsapp"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/app/publishapp"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// Route is one row of the route table. Every served route is here, which is
// what the OpenAPI document is generated from.
type Route struct {
	Method  string
	Path    string
	Tool    string // the tool this route is a door onto, if any
	Summary string // what a non-tool route does
	// Access decides the CORS and caching rules: AccessOpen routes (tools,
	// agent) have open CORS; AccessSession routes read the cookie, so they send
	// no CORS headers and are never cached.
	Access    Access
	BodyLimit int64 // 0 means DefaultBodyLimit
	Handler   echo.HandlerFunc
	// Query names query parameters the door reads itself (like render's
	// ?format), which are not part of the tool's input.
	Query []string
	// PathAs names the tool input field a path parameter fills, when the two
	// names differ (:ref fills exploration).
	PathAs map[string]string
	// Head also serves HEAD on a GET route that serves a document: the same
	// handler, so the same status and headers; net/http sends no body.
	Head bool
	// Sessionless routes never read the session, so they don't read it
	// before their handler (and answer while the database doesn't).
	Sessionless bool
	// Answers is what a route with its own Handler answers on success, each
	// described from the Go type the handler writes (openapi_answers.go).
	// A tool route's answer is its tool's output.
	Answers []Answer
	// Body is a value of the Go type a route with its own Handler decodes
	// its JSON body into, for the document (nil: no JSON body).
	Body any
	// Fails adds error statuses to the ones its class can answer (failsOf).
	Fails []int
	// Takes overrides the credentials the route takes (takesOf): any of
	// Anyone, Session, AgentLink, LinkToken.
	Takes []Credential
}

// Access is a route's CORS and caching class.
type Access int

// Access classes.
const (
	AccessOpen Access = iota
	AccessSession
	AccessPlain // no CORS, no session: /d, /s
)

// Deps is what the HTTP door needs. Wire fills it field by field.
type Deps struct {
	Config   config.Config
	Log      *slog.Logger
	Registry *toolkit.Registry
	Health   *siteapp.HealthService
	Sessions *peopleapp.SessionService
	Flowers  *flowersapp.FlowerService
	MCP      MCPDoor
	// Explorations is the service behind the exploration routes that are not
	// tools (links, claims, /s/:token, posted readings).
	Explorations *explorationsapp.ExplorationService
	// Annotations is behind a person's own annotations (/me/annotations).
	Annotations *annotationsapp.AnnotationService
	// SiteClaims is the site's own claims about the map's accounts.
	SiteClaims *relationsapp.SiteClaims
	Agent      *agentapp.AgentService
	// AgentJobs is a person's own agents: links, waits, presence, jobs.
	AgentJobs *agentjobsapp.AgentJobsService
	// Conversations is the list of a session's runs and explorations.
	Conversations *agentapp.ConversationService
	Invites       *moneyapp.InviteService
	Ledger        *moneyapp.Ledger
	// Snapshots is the service behind the snapshot body route.
	Snapshots *snapshotsapp.SnapshotService
	// SnapshotLinks, when set (PETAL_BLOB_REDIRECT), sends the body route's
	// gzip-taking readers to the blob store's signed URL.
	SnapshotLinks ports.SnapshotLinks
	SignIn        *peopleapp.SignInService
	Pay           *moneyapp.PayService
	// Publish is the service behind a published flower's SVG.
	Publish *publishapp.PublishService
	// Views keeps people's views (GET/PUT /api/v1/me/view, /api/v1/views/:hash).
	Views  *viewsapp.ViewService
	TopUps *moneyapp.TopUpService
	// Maps is the shared map's lists and pictures (nil: no map routes).
	Maps *mapsapp.MapService
	// Profiles keeps people's profiles and serves their pictures.
	Profiles *peopleapp.ProfileService
	// Wallets is where /signin's wallet connector finds its wallets.
	Wallets WalletConnector
	// Metrics receives the door's metrics (nil: none kept).
	Metrics ports.Metrics
	// Traced wraps the whole door in a server span per request (nil: no
	// tracing, nothing wrapped); the span is named by the route once routed.
	Traced HandlerWrap
}

// HandlerWrap wraps an http.Handler (tracing's, in cmd/petal).
type HandlerWrap func(http.Handler) http.Handler

// Server is the HTTP door.
type Server struct {
	deps    Deps
	echo    *echo.Echo
	handler http.Handler // echo, or echo in deps.Traced
	routes  []Route
	doc     openapiDoc
	// streams counts the event streams open per address (PETAL_SSE_PER_ADDRESS).
	streams streamCount
	// streamsOpen counts the SSE streams open, by kind, for the metrics.
	streamsOpen ports.Gauge
	// props caches each tool's query parameter types (queryTypes).
	props sync.Map
	// skill is /skill.md, rendered once the routes are known.
	skill siteapp.Skill
	// outer is the whole app as served: echo, or echo inside what Wrap put
	// around it.
	outer http.Handler
}

// New builds the Echo app with every route and middleware.
func New(deps Deps) *Server {
	deps.Metrics = ports.MetricsOrNone(deps.Metrics)
	// Lines logged with a request's context carry its request_id.
	deps.Log = slog.New(toolkit.WithRequestIDs(deps.Log.Handler()))
	e := echo.New()
	e.HideBanner = true
	e.HidePort = true
	e.HTTPErrorHandler = errorHandler(deps.Log)
	s := &Server{deps: deps, echo: e, streamsOpen: deps.Metrics.Gauge("petal_sse_streams_open",
		"SSE streams open now in this process, by kind: run (a viewer of an agent run, the chat's own stream included), tool (a long tool's progress) or live (a conversation's live signal).", "kind")}
	// A person who opens an address that is no page reads a page; a program
	// asking the API keeps its JSON.
	apiErrors := e.HTTPErrorHandler
	e.HTTPErrorHandler = func(err error, c echo.Context) {
		if !c.Response().Committed && s.noSuchPage(c, err) {
			if perr := s.errorPage(c, errs.New(errs.NotFound, "there is no page at "+cutPath(c.Request().URL.Path),
				"the pages are /make, /map and /connect"), ""); perr == nil {
				return
			}
		}
		apiErrors(err, c)
	}
	s.handler = e
	if deps.Traced != nil {
		e.Use(nameSpanByRoute)
		s.handler = deps.Traced(e)
	}
	e.Use(everyRequest(deps.Config.BodyTimeout, deps.Log, newRequestMetrics(deps.Metrics)))
	for _, r := range s.routeTable() {
		s.add(r)
	}
	s.renderSkill()
	return s
}

// routeTable is every route, by area. Areas add their routes here.
func (s *Server) routeTable() []Route {
	var rs []Route
	rs = append(rs, s.healthRoutes()...)
	rs = append(rs, s.authRoutes()...)
	rs = append(rs, s.payRoutes()...)
	rs = append(rs, s.topUpRoutes()...)
	rs = append(rs, s.mcpRoutes()...)
	rs = append(rs, s.explorationRoutes()...)
	rs = append(rs, s.annotationRoutes()...)
	rs = append(rs, s.siteClaimRoutes()...)
	rs = append(rs, s.agentRoutes()...)
	rs = append(rs, s.agentsRoutes()...)
	rs = append(rs, s.conversationRoutes()...)
	rs = append(rs, s.skillRoutes()...)
	rs = append(rs, s.flowerRoutes()...)
	rs = append(rs, s.viewRoutes()...)
	rs = append(rs, s.profileRoutes()...)
	rs = append(rs, s.openapiRoutes()...)
	rs = append(rs, s.snapshotRoutes()...)
	rs = append(rs, s.eyesRoutes()...)
	rs = append(rs, s.mapRoutes()...)
	rs = append(rs, s.publishRoutes()...)
	rs = append(rs, s.pageRoutes()...)
	rs = append(rs, s.relationRoutes()...)
	return rs
}

func (s *Server) add(r Route) {
	limit := r.BodyLimit
	if limit == 0 {
		limit = DefaultBodyLimit
	}
	mws := []echo.MiddlewareFunc{limitBody(limit)}
	switch r.Access {
	case AccessOpen:
		mws = append([]echo.MiddlewareFunc{openCORS}, mws...)
	case AccessSession:
		mws = append(mws, noStore)
	}
	if r.Access != AccessPlain && !r.Sessionless {
		mws = append(mws, s.readSessionFirst)
	}
	h := r.Handler
	if h == nil && r.Tool != "" {
		h = s.toolHandler(r)
	}
	if h == nil {
		panic("httpapi: route " + r.Method + " " + r.Path + " has no handler")
	}
	// Echo would wrap a route's middleware around its handler on every
	// request (a closure each); wrapped once here, the chain is the same.
	for i := len(mws) - 1; i >= 0; i-- {
		h = mws[i](h)
	}
	if r.Method == MethodAll {
		s.echo.Any(r.Path, h)
	} else {
		s.echo.Add(r.Method, r.Path, h)
	}
	if r.Head {
		if r.Method != http.MethodGet {
			panic("httpapi: route " + r.Method + " " + r.Path + " asks for HEAD, which only a GET route may")
		}
		s.echo.Add(http.MethodHead, r.Path, h)
	}
	if r.Access == AccessOpen {
		s.echo.Add(http.MethodOptions, r.Path, openCORS(func(c echo.Context) error { return c.NoContent(http.StatusNoContent) }))
	}
	s.routes = append(s.routes, r)
}

// Routes is the served route table.
func (s *Server) Routes() []Route { return append([]Route(nil), s.routes...) }

// Handler is the whole HTTP app.
func (s *Server) Handler() http.Handler {
	if s.outer != nil {
		return s.outer
	}
	return s.handler
}

// Wrap puts mw around the whole app, before it serves. The end-to-end tests
// check every answer against the OpenAPI document this way.
func (s *Server) Wrap(mw func(http.Handler) http.Handler) { s.outer = mw(s.Handler()) }

// Serve answers on ln until ctx ends, then stops accepting and drains for up
// to drain before closing what is left.
func (s *Server) Serve(ctx context.Context, ln net.Listener, drain time.Duration) error {
	srv := &http.Server{
		Handler:           s.Handler(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       120 * time.Second,
		ErrorLog:          slog.NewLogLogger(s.deps.Log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	if s.deps.AgentJobs != nil {
		// Open waits answer { job: null } at once, so they don't hold the
		// drain; the agent's own command asks again, elsewhere.
		srv.RegisterOnShutdown(s.deps.AgentJobs.Close)
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	s.deps.Log.Info("shutting down: draining requests", "for", drain.String())
	sctx, cancel := context.WithTimeout(context.Background(), drain)
	defer cancel()
	err := srv.Shutdown(sctx)
	if errors.Is(err, context.DeadlineExceeded) {
		s.deps.Log.Warn("drain time over: closing the connections left")
		err = srv.Close()
	}
	if serr := <-errc; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		return serr
	}
	return err
}

// streaming counts one open SSE stream of kind until the returned func runs.
func (s *Server) streaming(kind string) func() {
	s.streamsOpen.Add(1, kind)
	return func() { s.streamsOpen.Add(-1, kind) }
}
