package httpapi

// The pages the API's addresses lead to (/make, /draft, /connect, /map):
// html/template and a little plain JavaScript, embedded in the binary, with no
// build step and no request to any other site. They call the same services the
// API does, read the same session cookie, and leave every write to the API's
// own routes (so the same Origin rules hold). docs/pages.md.

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"html/template"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/mapsapp"
	"github.com/petal-near/petal/app/publishapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/corrections"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/people"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
)

//go:embed pages/*.tmpl pages/static
var pageFiles embed.FS

// pageCSP lets a page load only what its own site serves: no inline script or
// style, no framing, no form posted elsewhere.
const pageCSP = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; " +
	"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

// maxDraftSpec bounds /draft?spec=, the spec's JSON in the address.
const maxDraftSpec = 64 << 10

var (
	pageTemplates = template.Must(template.New("").Funcs(template.FuncMap{
		"asset":     assetURL,
		"percent":   percent,
		"ordinal":   ordinal,
		"when":      when,
		"share":     shareText,
		"linked":    linked,
		"kindWords": corrections.KindLabel,
		"movesOf":   movesOf,
	}).ParseFS(pageFiles, "pages/*.tmpl"))
	// assetVersions names each static file's content, so its address changes
	// with it and it may be kept long.
	assetVersions = versionAssets()
)

func versionAssets() map[string]string {
	out := map[string]string{}
	entries, err := fs.ReadDir(pageFiles, "pages/static")
	if err != nil {
		panic(err)
	}
	for _, e := range entries {
		b, err := pageFiles.ReadFile("pages/static/" + e.Name())
		if err != nil {
			panic(err)
		}
		sum := sha256.Sum256(b)
		out[e.Name()] = hex.EncodeToString(sum[:6])
	}
	return out
}

func assetURL(name string) string {
	v, ok := assetVersions[name]
	if !ok {
		panic("httpapi: no page asset " + name)
	}
	return "/pages/" + name + "?v=" + v
}

// percent writes a fraction as a percentage with one decimal.
func percent(f snapshots.Fraction) string {
	if !f.Defined {
		return "–"
	}
	tenths := (f.Millionths + 500) / 1000
	return strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10) + "%"
}

func (s *Server) pageRoutes() []Route {
	page := func(p, summary string, h echo.HandlerFunc) Route {
		return Route{Method: http.MethodGet, Path: p, Access: AccessSession, Summary: summary, Handler: h,
			Answers: append([]Answer{pageAnswer}, pageErrors()...), Takes: []Credential{Anyone, Session}}
	}
	return []Route{
		page("/make", "the page to chat with Petals' agent: ?run=<id> follows a run (an HTML page)", s.makePage),
		page("/draft", "the page of a drawn draft: ?spec=<a flower-spec/v1's JSON> (an HTML page)", s.draftPage),
		page("/connect", "the page on bringing your own agent and getting access (an HTML page)", s.connectPage),
		page("/map", "the map's gallery; ?id=<a map's id> opens one map (an HTML page)", s.mapGalleryPage),
		page("/compare", "two readings side by side, as compare_figures answers: ?a=<the earlier snapshot's sha256>&b=<the later one's>, &offset= pages the lists (an HTML page)", s.comparePage),
		page("/account", "what Petal knows of one account: ?id=<CAIP-10>, the groups on the map it is in (an HTML page)", s.accountPage),
		page(people.SignInPath, "sign in with a NEAR wallet through the wallet connector; ?attach=1 attaches another wallet; a redirect wallet's callbackUrl (an HTML page)", s.signInPage),
		page("/me", "a signed-in person's own page: credit, usage, tip, top-ups, view, profile, wallets (an HTML page)", s.mePage),
		{Method: http.MethodGet, Path: "/", Access: AccessPlain, Handler: s.home, Head: true, Answers: []Answer{{Status: http.StatusFound, Says: "to /make"}},
			Summary: "the site's front door: 302 to /make"},
		{Method: http.MethodGet, Path: "/pages/:file", Access: AccessPlain, Handler: s.pageAsset,
			Answers: []Answer{{Media: "text/javascript", Says: "the script"}, {Media: "text/css", Says: "the style sheet"},
				{Media: "image/svg+xml", Says: "a picture"}, notModified},
			Summary: "the pages' own script and style sheet"},
	}
}

// home sends a newcomer who opens the server's address to /make.
func (s *Server) home(c echo.Context) error {
	return c.Redirect(http.StatusFound, "/make")
}

// pageShell is what every page's layout reads.
type pageShell struct {
	Title  string
	Nav    string // the nav entry that is this page
	Signed bool   // the session is a signed-in person's (renderPage fills it)
	Who    pageWho
	Body   any
	// CSP replaces pageCSP for this page ("" keeps it): only /signin, which
	// runs the wallet connector, has a wider one.
	CSP string
}

// pageWho is the header's "who is signed in": the wallet this session came
// in with.
type pageWho struct {
	Account string
	Network string
}

// renderPage writes a page with the security headers every page carries.
func (s *Server) renderPage(c echo.Context, status int, name string, shell pageShell) error {
	shell.Signed = s.signed(c)
	if shell.Signed {
		shell.Who = s.who(c)
	}
	var buf bytes.Buffer
	if err := pageTemplates.ExecuteTemplate(&buf, name, shell); err != nil {
		return errs.New(errs.Internal, "the page could not be drawn").WithCause(err)
	}
	h := c.Response().Header()
	csp := pageCSP
	if shell.CSP != "" {
		csp = shell.CSP
	}
	h.Set("Content-Security-Policy", csp)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "same-origin")
	h.Set("Cache-Control", "no-store")
	return c.HTMLBlob(status, buf.Bytes())
}

// errorPage answers a page's error as a page, in the error's own status.
func (s *Server) errorPage(c echo.Context, err error, nav string) error {
	e := toPetalError(err)
	if StatusOf(e.Code) >= 500 && e.Code != errs.SourceFailed {
		s.deps.Log.ErrorContext(c.Request().Context(), "page failed", "path", c.Request().URL.Path, "err", err)
	}
	return s.renderPage(c, StatusOf(e.Code), "error.tmpl", pageShell{Title: "Not here", Nav: nav, Body: e})
}

func (s *Server) pageAsset(c echo.Context) error {
	name := c.Param("file")
	if _, ok := assetVersions[name]; !ok || strings.Contains(name, "/") {
		return errs.New(errs.NotFound, "no such page file")
	}
	b, err := pageFiles.ReadFile("pages/static/" + name)
	if err != nil {
		return errs.New(errs.NotFound, "no such page file")
	}
	h := c.Response().Header()
	h.Set("X-Content-Type-Options", "nosniff")
	if c.QueryParam("v") == assetVersions[name] {
		h.Set("Cache-Control", immutable)
	} else {
		h.Set("Cache-Control", "no-cache")
	}
	ct := mime.TypeByExtension(path.Ext(name))
	if !strings.Contains(ct, "charset") {
		ct += "; charset=utf-8"
	}
	return c.Blob(http.StatusOK, ct, b)
}

func (s *Server) signed(c echo.Context) bool {
	sess, ok := s.session(c)
	return ok && people.IsPerson(sess.Subject)
}

// who is the account and network the session signed in with, read as
// GET /api/v1/me reads them; a failure shows no name (the page still works).
func (s *Server) who(c echo.Context) pageWho {
	sess, _ := s.session(c)
	me, err := s.deps.SignIn.Me(c.Request().Context(), sess)
	if err != nil {
		s.deps.Log.WarnContext(c.Request().Context(), "reading who is signed in for a page", "err", err)
		return pageWho{}
	}
	var w pageWho
	if me.Account != nil {
		w.Account = *me.Account
	}
	if me.Network != nil {
		w.Network = *me.Network
	}
	return w
}

// makeBody is /make's: a run to follow, or none.
type makeBody struct {
	RunID    string
	Status   string
	Title    string
	Asked    string // the person's messages in the run, as JSON, for the script
	Recorded bool   // no model key: the agent answers with its recorded demo
	Public   bool   // Petals' agent is refused here: bring your own
}

func (s *Server) makePage(c echo.Context) error {
	body := makeBody{Recorded: s.deps.Agent.Recorded(), Public: s.deps.Config.Public, Asked: "[]"}
	title := "Make a flower"
	if id := c.QueryParam("run"); id != "" {
		run, err := s.deps.Agent.Run(c.Request().Context(), s.caller(c), id)
		if err != nil {
			return s.errorPage(c, err, "make")
		}
		var asked []string
		for _, m := range run.Thread {
			if m.Role == "user" && m.Content != "" {
				asked = append(asked, m.Content)
			}
		}
		b, err := json.Marshal(asked)
		if err != nil {
			return s.errorPage(c, err, "make")
		}
		body.RunID, body.Status, body.Title, body.Asked = run.ID, string(run.Status), run.Title, string(b)
		if run.Title != "" {
			title = run.Title
		}
	}
	return s.renderPage(c, http.StatusOK, "make.tmpl", pageShell{Title: title, Nav: "make", Body: body})
}

// draftBody is /draft's: the drawn spec, its legend, what it shows and the
// figures of its reading.
type draftBody struct {
	Spec           string
	Title          string
	SVG            template.HTML // drawn by specs.Render, which escapes every text it writes
	Legend         []specs.LegendEntry
	Interpretation string
	DraftLink      string
	Figures        *snapshots.FigureSet
	Demo           bool
	Problems       []errs.Problem
}

func (s *Server) draftPage(c echo.Context) error {
	raw := c.QueryParam("spec")
	if strings.TrimSpace(raw) == "" {
		return s.errorPage(c, errs.New(errs.BadInput, "this address names no draft", "a draft link is /d/<hash>; make one on /make"), "make")
	}
	if len(raw) > maxDraftSpec {
		return s.errorPage(c, errs.Newf(errs.BadInput, "the spec is larger than %s", humanBytes(maxDraftSpec)), "make")
	}
	spec := json.RawMessage(raw)
	ctx := c.Request().Context()
	caller := s.caller(c)
	// Through the registry, as POST /api/v1/render: the same limits and the
	// signed-in person's view and names.
	input, err := json.Marshal(map[string]json.RawMessage{"spec": spec})
	if err != nil || !json.Valid(spec) {
		return s.errorPage(c, errs.New(errs.BadInput, "spec is not JSON", "a draft link is /d/<hash>"), "make")
	}
	out, err := s.deps.Registry.Call(ctx, flowersapp.ToolRenderFlower, toolkit.Call{Input: input, Caller: caller})
	if err != nil {
		if e, ok := errs.As(err); ok && e.Code == errs.InvalidSpec {
			return s.renderPage(c, StatusOf(e.Code), "draft.tmpl", pageShell{Title: "A draft that cannot be drawn", Nav: "make",
				Body: draftBody{Spec: raw, Problems: e.Problems}})
		}
		return s.errorPage(c, err, "make")
	}
	rendered, ok := out.(flowersapp.Rendered)
	if !ok {
		return s.errorPage(c, errs.New(errs.Internal, "render_flower answered something other than a rendering"), "make")
	}
	view, err := s.deps.Flowers.ViewFor(ctx, caller.Subject, nil)
	if err != nil {
		return s.errorPage(c, err, "make")
	}
	flower, err := s.deps.Flowers.Flower(ctx, caller.Subject, spec, view)
	if err != nil {
		return s.errorPage(c, err, "make")
	}
	body := draftBody{Spec: raw, Title: flower.Spec.Title, SVG: template.HTML(rendered.SVG), Legend: rendered.Legend,
		Interpretation: flower.Interpretation, DraftLink: s.pageBase() + flower.ViewURL, Demo: rendered.Demo}
	if figures, err := s.deps.Flowers.ComputeFigures(ctx, flower.Spec.Snapshot, nil, ""); err == nil {
		body.Figures = &figures.FigureSet
	}
	title := flower.Spec.Title
	if title == "" {
		title = "A draft"
	}
	return s.renderPage(c, http.StatusOK, "draft.tmpl", pageShell{Title: title, Nav: "make", Body: body})
}

// pageBase is the site's address for the links a page shows: PETAL_API,
// else "{site}", which the page's script fills with its own origin (the
// request's Host is never trusted: see siteBase).
func (s *Server) pageBase() string {
	if b := strings.TrimRight(s.siteBase(), "/"); b != "" {
		return b
	}
	return "{site}"
}

// connectBody is /connect's.
type connectBody struct {
	Base   string
	Public bool
}

func (s *Server) connectPage(c echo.Context) error {
	return s.renderPage(c, http.StatusOK, "connect.tmpl", pageShell{Title: "Connect", Nav: "connect",
		Body: connectBody{Base: s.pageBase(), Public: s.deps.Config.Public}})
}

// mapCard is the part of a map's card (GET /api/v1/maps) the gallery shows.
type mapCard struct {
	ID       string  `json:"id"`
	Name     *string `json:"name"`
	Title    string  `json:"title"`
	About    string  `json:"about"`
	Chain    string  `json:"chain"`
	Address  *string `json:"address"`
	Picture  string  `json:"picture"`
	ViewURL  string  `json:"view_url"`
	Readings []struct {
		Snapshot string `json:"snapshot"`
		AsOf     string `json:"as_of"`
		About    string `json:"about"`
		Title    string `json:"title"`
		Count    int    `json:"count"`
		MadeBy   string `json:"made_by"`
		Drawings []struct {
			SHA     string  `json:"sha"`
			Name    *string `json:"name"`
			ViewURL string  `json:"view_url"`
			Picture string  `json:"picture"`
			MadeBy  string  `json:"made_by"`
			Demo    bool    `json:"demo"`
		} `json:"drawings"`
	} `json:"readings"`
	Demo   bool `json:"demo"` // a demo map of a made-up reading (an empty site's)
	Hidden *struct {
		Why string `json:"why"`
	} `json:"hidden"`
	Mark *pageMark `json:"mark"`
}

// Label is what a card is called: its name, else its title.
func (m mapCard) Label() string {
	if m.Name != nil && *m.Name != "" {
		return *m.Name
	}
	return m.Title
}

// mapBody is /map's: the gallery's page of cards, or one map.
type mapBody struct {
	Cards []mapCard
	Next  string // the next page's cursor
	One   *mapCard
	None  bool // this site keeps no map
	// History is one map's readings the oldest first with their headline
	// figures, and Chart their SVG (domain/maps.HistoryChart, every text in
	// it escaped there).
	History []maps.HistoryPoint
	Chart   template.HTML
	// Corrections are what people said is wrong with the map's flowers,
	// shown beside them (the flowers never change).
	Corrections []publishapp.FlowerCorrections
	// Blocs are who votes with whom in the map's newest proposals reading,
	// listed beside that reading.
	Blocs *blocsView
}

// Demo reports whether the gallery shows demo maps (then it says why).
func (b mapBody) Demo() bool {
	for _, c := range b.Cards {
		if c.Demo {
			return true
		}
	}
	return false
}

func (s *Server) mapGalleryPage(c echo.Context) error {
	if s.deps.Maps == nil {
		return s.renderPage(c, http.StatusOK, "map.tmpl", pageShell{Title: "The map", Nav: "map", Body: mapBody{None: true}})
	}
	p := mapsapp.MapPage{Cursor: c.QueryParam("cursor")}
	if sess, ok := s.session(c); ok {
		p.Subject = sess.Subject
	}
	ctx := c.Request().Context()
	if id := c.QueryParam("id"); id != "" {
		b, err := s.deps.Maps.OneMap(ctx, id, p)
		if err != nil {
			return s.errorPage(c, err, "map")
		}
		var one struct {
			Map mapCard `json:"map"`
		}
		if err := json.Unmarshal(b, &one); err != nil {
			return s.errorPage(c, errs.New(errs.Internal, "the map could not be read").WithCause(err), "map")
		}
		body := mapBody{One: &one.Map}
		if hb, err := s.deps.Maps.History(ctx, id); err == nil {
			var h mapsapp.MapHistory
			if json.Unmarshal(hb, &h) == nil {
				body.History, body.Chart = h.Readings, template.HTML(h.Chart) // #nosec G203: drawn by HistoryChart, which escapes its text
			}
			body.Blocs = s.mapBlocs(c, body.History)
		}
		if s.deps.Publish != nil {
			// Shown beside the map, as its history is: the map's page stands
			// without them.
			if fixes, err := s.deps.Publish.MapCorrections(ctx, id); err == nil {
				body.Corrections = fixes
			} else {
				s.deps.Log.WarnContext(ctx, "reading a map's corrections for its page", "map", id, "err", err)
			}
		}
		return s.renderPage(c, http.StatusOK, "map.tmpl", pageShell{Title: one.Map.Label(), Nav: "map", Body: body})
	}
	b, err := s.deps.Maps.Maps(ctx, p)
	if err != nil {
		return s.errorPage(c, err, "map")
	}
	var list struct {
		Maps       []mapCard `json:"maps"`
		NextCursor *string   `json:"next_cursor"`
	}
	if err := json.Unmarshal(b, &list); err != nil {
		return s.errorPage(c, errs.New(errs.Internal, "the map could not be read").WithCause(err), "map")
	}
	body := mapBody{Cards: list.Maps}
	if list.NextCursor != nil {
		body.Next = *list.NextCursor
	}
	return s.renderPage(c, http.StatusOK, "map.tmpl", pageShell{Title: "The map", Nav: "map", Body: body})
}

// noSuchPage reports whether err is Echo's "no route" for a browser's
// request of a path outside the API: that person gets a page, not JSON.
func (s *Server) noSuchPage(c echo.Context, err error) bool {
	var he *echo.HTTPError
	if !errors.As(err, &he) || he.Code != http.StatusNotFound {
		return false
	}
	r := c.Request()
	if r.Method != http.MethodGet || !wantsHTML(r) {
		return false
	}
	for _, prefix := range []string{"/api/", "/mcp", "/pages/", "/s/", "/.well-known/"} {
		if strings.HasPrefix(r.URL.Path, prefix) {
			return false
		}
	}
	return true
}

// wantsHTML is a browser's navigation: its Accept names text/html.
func wantsHTML(r *http.Request) bool {
	return strings.Contains(r.Header.Get("Accept"), "text/html")
}

// cutPath is a path short enough to show.
func cutPath(p string) string {
	if len(p) > 80 {
		return strings.ToValidUTF8(p[:80], "") + "…"
	}
	return strings.ToValidUTF8(p, "\uFFFD")
}
