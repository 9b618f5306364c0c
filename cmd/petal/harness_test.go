package main

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
)

// Tests run in parallel (t.Parallel) unless they change the process (t.Setenv,
// a signal, a package variable) or measure its time or memory: each has its
// own database, listener and blob keys, so they wait on the database and the
// fakes side by side.

// testPetal is the real service, wired by Wire exactly as `petal serve` wires
// it, on a fresh database and a real loopback listener.
type testPetal struct {
	URL string
	DB  *pgtest.DB
	Cfg config.Config
	Svc *service
}

// offlineDefaults keep a test's petal off the real NEAR (health checks the
// chain, say) unless the test points it at a fake: nothing listens on port 1.
var offlineDefaults = map[string]string{
	"PETAL_NEAR_RPC_MAINNET": "http://127.0.0.1:1",
	"PETAL_NEAR_RPC_TESTNET": "http://127.0.0.1:1",
	"PETAL_ONECLICK_URL":     "http://127.0.0.1:1", // the NEAR price job reads 1Click at start
	"PETAL_FASTNEAR_MAINNET": "http://127.0.0.1:1",
	"PETAL_FASTNEAR_TESTNET": "http://127.0.0.1:1",
	// The map's SocialDB sync reads the chain at start; a test that wants it
	// turns it on (or runs Svc.MapSync itself).
	"PETAL_MAP_SYNC_MIN": "0",
	// The same for the maps' marks (Svc.Marks.Run).
	"PETAL_MAP_MARKS_MIN": "0",
	// The recorded demo at full speed; a test that wants to see it unfold
	// (stop it, reload into it) paces it itself.
	"PETAL_RECORDED_PACE_MS": "0",
	// An empty map stays empty (the tests that count what is on it); the
	// demo map's own tests turn it on.
	"PETAL_DEMO_MAP": "off",
}

// testBlobDir is the blob store folder of every petal this test binary
// starts: keys are SHA-256s, so tests and replicas sharing one store is what
// replicas sharing one bucket do. TestMain removes it.
var testBlobDir = sync.OnceValue(func() string {
	dir, err := os.MkdirTemp("", "petal-test-blobs-")
	if err != nil {
		panic(err)
	}
	return dir
})

// testBlobs is the blob store (a file:// folder) of the petals tests start: bodies
// and pictures go through it, as they do with the default store.
func testBlobs() string {
	return "file://" + filepath.ToSlash(testBlobDir()) + "?create_dir=true"
}

// startPetal serves petal for one test. env overrides the configuration.
func startPetal(t testing.TB, env map[string]string) *testPetal {
	t.Helper()
	db := pgtest.New(t)
	return startPetalOn(t, env, db, db.DB)
}

// startPetalOn serves petal over serving, a pool on db (or on a way to it the
// test controls, like a proxy it can cut).
func startPetalOn(t testing.TB, env map[string]string, db *pgtest.DB, serving *postgres.DB) *testPetal {
	t.Helper()
	cfg, err := config.LoadConfig(func(k string) string {
		if v, ok := env[k]; ok {
			return v
		}
		return offlineDefaults[k]
	})
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	cfg.DatabaseURL = db.URL
	if cfg.BlobURL == "" {
		cfg.BlobURL = testBlobs()
	}
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if testing.Verbose() {
		log = slog.New(slog.NewTextHandler(testWriter{t}, nil))
	}
	ctx, cancel := context.WithCancel(context.Background())
	svc, cleanup, err := buildService(ctx, cfg, log, lentPool{serving})
	if err != nil {
		cancel()
		t.Fatalf("wire: %v", err)
	}
	checkEveryAnswer(t, svc)
	stopJobs, err := svc.start(ctx)
	if err != nil {
		cancel()
		cleanup()
		t.Fatalf("start: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- svc.Server.Serve(ctx, ln, 2*time.Second) }()
	t.Cleanup(func() {
		cancel()
		stopJobs()
		<-done
		cleanup()
	})
	return &testPetal{URL: "http://" + ln.Addr().String(), DB: db, Cfg: cfg, Svc: svc}
}

// checkEveryAnswer holds every answer of svc to the OpenAPI document it
// serves (openapi_check_test.go); the test fails at its end for each answer
// its description does not say.
func checkEveryAnswer(t testing.TB, svc *service) {
	t.Helper()
	doc, err := svc.Server.OpenAPI()
	if err != nil {
		t.Fatalf("the OpenAPI document: %v", err)
	}
	b, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	problems := &answerProblems{}
	svc.Server.Wrap(checkAnswers(checkerFor(t, b), problems.add))
	// Registered before the server's own cleanup, so it runs after the
	// server has stopped and every answer has been checked.
	t.Cleanup(func() {
		for _, p := range problems.all() {
			t.Errorf("an answer the OpenAPI document does not describe: %s", p)
		}
	})
}

// do sends one request and returns the response with its body read.
func (p *testPetal) do(t testing.TB, method, path, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, p.URL+path, r)
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res, string(b)
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
