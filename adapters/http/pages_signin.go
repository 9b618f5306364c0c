package httpapi

// /signin and /me: a person's own pages. /signin runs NEAR's wallet connector
// (@hot-labs/near-connect, bundled as pages/static/near-connect.js by
// pages/connector/build.sh), the one page whose policy lets a wallet's
// sandboxed frame run; /me reads everything through the API's own routes.

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"

	"github.com/labstack/echo/v4"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/specs"
)

// WalletConnector is where /signin's connector finds its wallets: the
// manifest it reads and the hosts the page may reach (the manifest's, each
// wallet's script and what that script calls). docs/pages.md.
type WalletConnector struct {
	// ManifestURL is the connector's wallet list; "" is the connector's own.
	ManifestURL string
	// Hosts are origins (scheme://host[:port]) the page and its wallet
	// frames may connect to.
	Hosts []string
}

// DefaultWalletManifest is the list the connector reads by default: HOT's
// repository, where each wallet keeps its own entry and script.
const DefaultWalletManifest = "https://raw.githubusercontent.com/hot-dao/near-selector/refs/heads/main/repository/manifest.json"

// DefaultWalletHosts are what the default manifest's wallets reach: the
// manifest and the scripts' hosts, NEAR's RPC, and the wallets' own relays.
var DefaultWalletHosts = []string{
	"https://raw.githubusercontent.com", "https://cdn.jsdelivr.net", "https://wallet.intear.tech",
	"https://logout-bridge-service.intear.tech", "https://rpc.mainnet.near.org", "https://rpc.testnet.near.org",
	"https://h4n.app", "https://near-mobile-signer-backend.peersyst.tech",
}

// connectorCSP is /signin's policy: pageCSP widened only as the connector
// needs. Its wallet frames are srcdoc iframes (sandbox="allow-scripts", so
// an opaque origin) that inherit this policy: their two inline scripts carry
// the page's nonce; the connector's popups set inline styles; wallet icons
// are https: pictures; and the connector and its frames fetch the manifest,
// the wallets' scripts and their hosts.
func connectorCSP(nonce string, hosts []string) string {
	connect := "'self'"
	for _, h := range hosts {
		connect += " " + h
	}
	return "default-src 'self'; script-src 'self' 'nonce-" + nonce + "'; style-src 'self' 'unsafe-inline'; " +
		"img-src 'self' data: https:; connect-src " + connect + "; frame-src 'self'; " +
		"object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

// connectorHosts are the hosts /signin may reach: the manifest's origin and
// the configured ones, each an origin (anything else is dropped, so a
// setting cannot smuggle a CSP keyword or another directive in).
func (w WalletConnector) connectorHosts() []string {
	manifest := w.ManifestURL
	if manifest == "" {
		manifest = DefaultWalletManifest
	}
	seen := map[string]bool{}
	var out []string
	for _, h := range append([]string{manifest}, w.Hosts...) {
		u, err := url.Parse(strings.TrimSpace(h))
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" || u.User != nil ||
			strings.ContainsAny(u.Host, " ;,'*") {
			continue
		}
		o := strings.ToLower(u.Scheme + "://" + u.Host)
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// signInBody is /signin's.
type signInBody struct {
	Manifest string
	Nonce    string
	Attach   bool
}

func (s *Server) signInPage(c echo.Context) error {
	var raw [16]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return s.errorPage(c, errs.New(errs.Internal, "the page could not be drawn").WithCause(err), "signin")
	}
	nonce := hex.EncodeToString(raw[:]) // hex: nothing in it for an attribute or the header to escape
	attach := c.QueryParam("attach") == "1"
	if attach && !s.signed(c) {
		return s.errorPage(c, errs.New(errs.Unauthorised, "sign in first to attach another wallet", "sign in on /signin, then attach a wallet from /me"), "signin")
	}
	w := s.deps.Wallets
	title := "Sign in"
	if attach {
		title = "Attach a wallet"
	}
	return s.renderPage(c, http.StatusOK, "signin.tmpl", pageShell{Title: title, Nav: "signin",
		Body: signInBody{Manifest: w.ManifestURL, Nonce: nonce, Attach: attach},
		CSP:  connectorCSP(nonce, w.connectorHosts())})
}

// meBody is /me's: the spec its view's sample flower draws.
type meBody struct {
	SampleSpec string
}

func (s *Server) mePage(c echo.Context) error {
	if !s.signed(c) {
		return s.errorPage(c, errs.New(errs.Unauthorised, "this is a signed-in person's own page", "sign in on /signin"), "me")
	}
	return s.renderPage(c, http.StatusOK, "me.tmpl", pageShell{Title: "You", Nav: "me", Body: meBody{SampleSpec: sampleSpec()}})
}

// sampleSpec is the flower /me draws through the person's view: the first
// reading that ships with petal, as propose_spec draws it.
var sampleSpec = sync.OnceValue(func() string {
	shipped := snapshotsapp.ShippedSnapshots()
	if len(shipped) == 0 {
		return ""
	}
	spec, err := specs.Propose(&shipped[0].Snapshot, shipped[0].SHA256, "the largest members")
	if err != nil {
		return ""
	}
	b, err := json.Marshal(spec)
	if err != nil {
		return ""
	}
	return string(b)
})
