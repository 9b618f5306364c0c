package main

import (
	"os/exec"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const module = "github.com/petal-near/petal"

// TestImportRule holds the layers to the rule in docs/architecture.md: imports
// point inward (cmd → adapters → app → ports → domain), an adapter never
// imports another adapter, the domain does no I/O, and inside app a
// capability imports only the kernel and capabilities of a lower tier
// (appTiers). Test files are held to
// it too, with the stand-ins of testImportBreaksRule.
func TestImportRule(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-f",
		`{{.ImportPath}} {{join .Imports " "}} | {{join .TestImports " "}} {{join .XTestImports " "}}`, module+"/...").CombinedOutput()
	require.NoError(t, err, "go list: %s", out)
	var broken []string
	packages, testImports := 0, 0
	for line := range strings.Lines(strings.TrimSpace(string(out))) {
		code, tests, _ := strings.Cut(line, "|")
		fields := strings.Fields(code)
		pkg, imports := fields[0], fields[1:]
		packages++
		for _, imp := range imports {
			if why := importBreaksRule(pkg, imp); why != "" {
				broken = append(broken, pkg+" imports "+imp+": "+why)
			}
		}
		for _, imp := range strings.Fields(tests) {
			testImports++
			if why := testImportBreaksRule(pkg, imp); why != "" {
				broken = append(broken, pkg+"'s tests import "+imp+": "+why)
			}
		}
	}
	require.Greater(t, packages, 5, "go list found too few packages: %s", out)
	require.Greater(t, testImports, 50, "go list found too few test imports: %s", out)
	require.Empty(t, broken, "the import rule (docs/architecture.md) is broken")
}

// standIns are the adapters any package's tests may use besides what its
// layer may import: the in-memory adapters, which stand in for a store a
// test only needs to exist, and the NEAR RPC, model, web page and web search
// adapters, which tests run for real against the fakes at the network edge
// (nearrpctest, nearaitest, pages served on loopback, bravetest), and the
// EVM adapter, run against a real EVM (evmtest). PostgreSQL's
// adapter is not one: outside its own package and cmd, no test imports it.
var standIns = []string{"adapters/memory", "adapters/nearrpc", "adapters/nearai", "adapters/webpage", "adapters/brave", "adapters/evm"}

// testImportBreaksRule is importBreaksRule for a package's test files. The
// domain's and the ports' tests get no stand-ins: they need no adapter.
func testImportBreaksRule(pkg, imp string) string {
	if from := layer(pkg); from == "domain" || from == "ports" {
		return importBreaksRule(pkg, imp)
	}
	if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
		for _, s := range standIns {
			if rest == s || strings.HasPrefix(rest, s+"/") {
				return ""
			}
		}
	}
	return importBreaksRule(pkg, imp)
}

// ioInDomain are imports that mean I/O; the domain takes what it needs through
// ports instead.
var ioInDomain = []string{"net", "net/http", "database/sql", "os/exec", "github.com/jackc/", "github.com/labstack/", "github.com/golang-migrate/"}

// appTiers are app's packages by tier (docs/architecture.md, "The app
// floor"). Tier 0 is the kernel (the tool kernel, the configuration, the
// internal helpers), which imports no capability; a capability imports the
// kernel and capabilities of lower tiers only, never one of its own tier, so
// a call that must go up goes through an interface the caller declares,
// wired in cmd. A new package takes its place here first.
var appTiers = map[string]int{
	"config": 0, "toolkit": 0, "internal": 0,
	"jobsapp": 1, "snapshotsapp": 1, "eyesapp": 1,
	"viewsapp": 2, "peopleapp": 2, "relationsapp": 2,
	"flowersapp": 3, "moneyapp": 3, "mapsapp": 3,
	"explorationsapp": 4,
	"annotationsapp":  5, "agentjobsapp": 5,
	"publishapp": 6,
	"agentapp":   7, "siteapp": 7,
}

// appTierBreak is the tier rule between two app packages: "" when from may
// import to.
func appTierBreak(pkg, imp string) string {
	if pkg == imp {
		return "" // a package's external tests import it
	}
	from, to := appPackage(pkg), appPackage(imp)
	ft, ok := appTiers[from]
	if !ok {
		return "app/" + from + " has no tier: give it one in appTiers (docs/architecture.md)"
	}
	tt, ok := appTiers[to]
	if !ok {
		return "app/" + to + " has no tier: give it one in appTiers (docs/architecture.md)"
	}
	switch {
	case ft == 0 && tt == 0:
		return ""
	case ft == 0:
		return "the kernel imports no capability"
	case tt < ft:
		return ""
	}
	return "a capability imports only capabilities of a lower tier (appTiers): a call up goes through an interface the caller declares"
}

// appPackage is the package's folder directly under app ("internal" for all
// of app/internal/...).
func appPackage(pkg string) string {
	rest := strings.TrimPrefix(pkg, module+"/app/")
	first, _, _ := strings.Cut(rest, "/")
	return first
}

func importBreaksRule(pkg, imp string) string {
	from, to := layer(pkg), layer(imp)
	if from == "app" && to == "app" {
		return appTierBreak(pkg, imp)
	}
	if from == "domain" {
		for _, bad := range ioInDomain {
			if imp == bad || (strings.HasSuffix(bad, "/") && strings.HasPrefix(imp, bad)) {
				return "the domain does no I/O"
			}
		}
	}
	if to == "" { // outside the module
		return ""
	}
	allowed := map[string][]string{
		"domain":     {"domain"},
		"ports":      {"ports", "domain"}, // ports/porttest: the port contract suites
		"app":        {"app", "ports", "domain"},
		"migrations": {},
		"cmd":        {"cmd", "adapters", "app", "ports", "domain", "migrations"},
	}
	if strings.HasPrefix(from, "adapters/") {
		// adapters/internal holds what several adapters share (an event
		// bus's waiter sets); it imports no adapter itself.
		if to == "adapters/internal" && from != to {
			return ""
		}
		if strings.HasPrefix(to, "adapters/") && to != from {
			return "an adapter never imports another adapter"
		}
		allowed[from] = []string{from, "app", "ports", "domain", "migrations"}
	}
	for _, ok := range allowed[from] {
		if to == ok || (ok == "adapters" && strings.HasPrefix(to, "adapters/")) {
			return ""
		}
	}
	return "imports point inward only: cmd → adapters → app → ports → domain"
}

// layer names a package's layer: domain, ports, app, adapters/<name>, cmd or
// migrations; "" for packages outside the module.
func layer(pkg string) string {
	rest, ok := strings.CutPrefix(pkg, module+"/")
	if !ok {
		return ""
	}
	parts := strings.Split(rest, "/")
	if parts[0] == "adapters" && len(parts) > 1 {
		return "adapters/" + parts[1]
	}
	return parts[0]
}

func TestImportRuleCatchesBreaks(t *testing.T) {
	t.Parallel()
	cases := []struct{ pkg, imp string }{
		{module + "/domain/credit", module + "/ports"},
		{module + "/domain/credit", "net/http"},
		{module + "/ports", module + "/app"},
		{module + "/app/agentapp", module + "/adapters/postgres"},
		{module + "/adapters/http", module + "/adapters/postgres"},
		{module + "/adapters/http", module + "/adapters/postgres/pgtest"},
		{module + "/adapters/postgres", module + "/cmd/petal"},
		{module + "/adapters/internal/watchset", module + "/adapters/postgres"},
		{module + "/app/snapshotsapp", module + "/adapters/internal/watchset"},
		{module + "/app/snapshotsapp", module + "/app/flowersapp"}, // up a tier
		{module + "/app/flowersapp", module + "/app/moneyapp"},     // the same tier
		{module + "/app/config", module + "/app/moneyapp"},         // the kernel
		{module + "/app/newapp", module + "/app/toolkit"},          // no tier
	}
	for _, c := range cases {
		require.NotEmpty(t, importBreaksRule(c.pkg, c.imp), "%s → %s should break the rule", c.pkg, c.imp)
	}
	fine := []struct{ pkg, imp string }{
		{module + "/adapters/postgres/pgtest", module + "/adapters/postgres"},
		{module + "/adapters/postgres", module + "/migrations"},
		{module + "/cmd/petal", module + "/adapters/http"},
		{module + "/app/agentapp", module + "/domain/errs"},
		{module + "/app/agentapp", module + "/app/publishapp"},
		{module + "/app/mapsapp", module + "/app/internal/hiddenmaps"},
		{module + "/app/toolkit", module + "/app/config"},
		{module + "/ports/porttest", module + "/ports"},
		{module + "/domain/snapshots", "encoding/json"},
		{module + "/adapters/postgres", module + "/adapters/internal/watchset"},
		{module + "/adapters/memory", module + "/adapters/internal/watchset"},
	}
	for _, c := range fine {
		require.Empty(t, importBreaksRule(c.pkg, c.imp), "%s → %s is allowed", c.pkg, c.imp)
	}

	testsBreak := []struct{ pkg, imp string }{
		{module + "/app/agentapp", module + "/adapters/postgres"},
		{module + "/app/mapsapp", module + "/adapters/postgres/pgtest"},
		{module + "/adapters/http", module + "/adapters/postgres"},
		{module + "/adapters/nearai", module + "/adapters/postgres/pgtest"},
		{module + "/domain/snapshots", module + "/adapters/memory"},
		{module + "/ports/porttest", module + "/adapters/memory"},
	}
	for _, c := range testsBreak {
		require.NotEmpty(t, testImportBreaksRule(c.pkg, c.imp), "%s's tests → %s should break the rule", c.pkg, c.imp)
	}
	testsFine := []struct{ pkg, imp string }{
		{module + "/app/flowersapp", module + "/adapters/memory"},
		{module + "/app/snapshotsapp", module + "/adapters/nearrpc/nearrpctest"},
		{module + "/app/agentapp", module + "/adapters/nearai"},
		{module + "/app/relationsapp", module + "/app/relationsapp"},
		{module + "/adapters/postgres", module + "/ports/porttest"},
		{module + "/adapters/http", module + "/adapters/memory"},
		{module + "/cmd/petal", module + "/adapters/postgres/pgtest"},
	}
	for _, c := range testsFine {
		require.Empty(t, testImportBreaksRule(c.pkg, c.imp), "%s's tests → %s is allowed", c.pkg, c.imp)
	}
}
