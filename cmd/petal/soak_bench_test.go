package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/snapshotsapp"
)

// BenchmarkSoak is issue 31's soak; deploy/bench/soak.sh runs it for 30
// minutes. Three `petal serve` processes share one database through
// Debian's PgBouncer in transaction mode (LISTEN and migrations on the
// direct URL), with a fake NEAR node and a scripted NEAR AI at the network
// edge: two replicas chat on the scripted model (held and settled on the
// ledger, from an invite), the third on the recorded one. A paced mix of
// what people do is spread over the three at PETAL_SOAK_RATE actions a
// second from a crowd of 2,000 addresses (cf-connecting-ip from a trusted proxy):
// tool calls, chats, SSE viewers joining and leaving, agent waits,
// explorations, publishing and map reads. Every minute it prints errors by
// route and code, p50/p99 per route, and each replica's RSS and goroutines;
// at the start and end PostgreSQL's connections and largest tables; at the
// end, what is still held or running (both must be none). One iteration is
// the whole soak: -benchtime 1x.
//
//	PETAL_SOAK_FOR=30m go test ./cmd/petal -run '^$' -bench '^BenchmarkSoak$' -benchtime 1x -timeout 45m
func BenchmarkSoak(b *testing.B) {
	soakFor := 2 * time.Minute
	if d, err := time.ParseDuration(os.Getenv("PETAL_SOAK_FOR")); err == nil && d > 0 {
		soakFor = d
	}
	rate := benchEnvInt("PETAL_SOAK_RATE", 20)
	every := time.Minute
	if d, err := time.ParseDuration(os.Getenv("PETAL_SOAK_EVERY")); err == nil && d > 0 {
		every = d
	}

	db := pgtest.New(b)
	bouncer := pgtest.StartPgBouncer(b, "transaction", 12)
	rpc := nearrpctest.New(b)
	model := nearaitest.New(b) // past its (empty) script, every completion is a plain answer
	// A site with a model key reads its receivers at start.
	for _, receiver := range []string{"petals.near", "petals.testnet"} {
		params, _ := json.Marshal(map[string]string{"request_type": "view_account", "finality": "final", "account_id": receiver})
		rpc.Add(nearrpctest.Recording{Method: "query", Params: params, Response: json.RawMessage(`{"jsonrpc":"2.0","id":"x","result":{"amount":"1",` +
			`"locked":"0","code_hash":"11111111111111111111111111111111","storage_usage":1,"storage_paid_at":0,"block_height":1,"block_hash":"11111111111111111111111111111111"}}`)})
	}
	common := map[string]string{
		"DATABASE_URL":                   bouncer.URL(b, db.URL),
		"DATABASE_DIRECT_URL":            db.URL,
		"PETAL_DB_POOL_SIZE":             "6",
		"PETAL_API":                      siteOrigin,
		"PETAL_NEAR_RPC_MAINNET":         rpc.URL,
		"PETAL_NEAR_RPC_TESTNET":         rpc.URL,
		"PETAL_ONECLICK_URL":             "http://127.0.0.1:1",
		"PETAL_NEAR_USD":                 "4",
		"PETAL_TRUSTED_PROXIES":          "127.0.0.1/32",
		"PETAL_TOOL_CALLS_PER_MIN":       "600",
		"PETAL_NEW_CHATS_PER_HOUR":       "1000",
		"PETAL_FOLLOWUPS_PER_HOUR":       "1000",
		"PETAL_LLM_DAILY_USD":            "100000",
		"PETAL_POSTED_SNAPSHOTS_PER_DAY": "200",
		"PETAL_RECORDED_PACE_MS":         "100",
		"PETAL_MAP_SYNC_MIN":             "0",
		"PETAL_MAP_MARKS_MIN":            "0",
		"PETAL_LOG_FORMAT":               "json",
		// Every replica seals and opens wallets with the one key.
		"PETAL_WALLET_KEY": strings.Repeat("0f", 32),
	}
	scripted := map[string]string{
		"NEAR_AI_API_KEY":  "sk-soak",
		"NEAR_AI_BASE_URL": model.BaseURL(),
	}
	type replica struct {
		name, metrics string
		proc          *petalProcess
		scripted      bool
	}
	var replicas []*replica
	for i, name := range []string{"A", "B", "C"} {
		env := map[string]string{}
		for k, v := range common {
			env[k] = v
		}
		r := &replica{name: name, metrics: freeAddr(b), scripted: i < 2}
		env["PETAL_METRICS_ADDR"] = r.metrics
		if r.scripted {
			for k, v := range scripted {
				env[k] = v
			}
		}
		r.proc = startProcess(b, db, env)
		replicas = append(replicas, r)
	}
	a := replicas[0].proc.testPetal

	// What the mix draws on: a shipped reading and a stored one, a spec of
	// it, an invite session, a signed-in wallet and its agent's link.
	shipped := snapshotsapp.ShippedSnapshots()[0].SHA256
	sha, _, err := snapshotsapp.StoreSnapshot(context.Background(), postgres.NewSnapshotRepository(db.DB), flowerDAOSnapshot(), snapshotsapp.OriginThisSite)
	if err != nil {
		b.Fatal(err)
	}
	var proposal struct {
		Spec json.RawMessage `json:"spec"`
	}
	decodeOK(b, a.URL, http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+sha+`"}`, nil, &proposal)
	invite := mintInviteTB(b, db, "500")
	inviteCookie := inviteSessionTB(b, a.URL, invite)
	aliceCookie := signInAliceTB(b, a)
	agentToken := agentLinkTB(b, a, aliceCookie)

	s := newSoakStats()
	var runsMu sync.Mutex
	type watchable struct{ id, cookie string }
	var runs []watchable // recent runs, for viewers: a run shows to its own session
	addRun := func(id, cookie string) {
		runsMu.Lock()
		defer runsMu.Unlock()
		runs = append(runs, watchable{id, cookie})
		if len(runs) > 200 {
			runs = runs[len(runs)-200:]
		}
	}
	someRun := func() (watchable, bool) {
		runsMu.Lock()
		defer runsMu.Unlock()
		if len(runs) == 0 {
			return watchable{}, false
		}
		return runs[rand.IntN(len(runs))], true
	}
	var published atomic.Int64
	client := &http.Client{Timeout: 60 * time.Second}
	pick := func() *replica { return replicas[rand.IntN(len(replicas))] }
	pickScripted := func() *replica { return replicas[rand.IntN(2)] }
	call := func(route string, r *replica, method, path, body string, headers ...string) (int, string) {
		code, out, _ := s.call(client, route, r.proc.URL, method, path, body, headers...)
		return code, out
	}
	actions := []struct {
		weight int
		name   string
		do     func()
	}{
		{10, "GET /api/v1/networks", func() { call("GET /api/v1/networks", pick(), http.MethodGet, "/api/v1/networks", "") }},
		{10, "GET describe", func() {
			call("GET /api/v1/snapshots/:sha256/describe", pick(), http.MethodGet, "/api/v1/snapshots/"+shipped+"/describe?top=5", "")
		}},
		{8, "POST figures", func() {
			call("POST /api/v1/figures", pick(), http.MethodPost, "/api/v1/figures", `{"sha256":"`+sha+`"}`)
		}},
		{5, "POST propose", func() {
			call("POST /api/v1/specs/propose", pick(), http.MethodPost, "/api/v1/specs/propose", `{"sha256":"`+shipped+`"}`)
		}},
		{5, "POST render", func() {
			call("POST /api/v1/render", pick(), http.MethodPost, "/api/v1/render?format=svg", `{"spec":`+string(proposal.Spec)+`}`)
		}},
		{3, "POST snapshots", func() {
			call("POST /api/v1/snapshots", pick(), http.MethodPost, "/api/v1/snapshots", `{"network":"near-dao-members","params":{"dao":"marketing"}}`, "Accept", "application/json")
		}},
		{6, "explorations", func() {
			var made struct{ ID string }
			code, body, h := s.call(client, "POST /api/v1/explorations", pick().proc.URL, http.MethodPost, "/api/v1/explorations", `{"question":"who holds power in marketing?"}`)
			if code != http.StatusOK || json.Unmarshal([]byte(body), &made) != nil || made.ID == "" {
				return
			}
			// The first write opened an anonymous session: its owner goes on
			// with it, on any replica, as behind a load balancer.
			owner := sessionOf(h)
			call("POST /api/v1/explorations/:ref/steps", pick(), http.MethodPost, "/api/v1/explorations/"+made.ID+"/steps",
				`{"spec":`+string(proposal.Spec)+`,"note":"a soak step"}`, "Cookie", owner)
			call("GET /api/v1/explorations/:ref", pick(), http.MethodGet, "/api/v1/explorations/"+made.ID, "", "Cookie", owner)
		}},
		{6, "map", func() {
			call("GET /api/v1/map", pick(), http.MethodGet, "/api/v1/map", "")
			call("GET /api/v1/maps", pick(), http.MethodGet, "/api/v1/maps", "")
		}},
		{3, "relations", func() {
			call("GET /api/v1/relations/overview", pick(), http.MethodGet, "/api/v1/relations/overview", "")
		}},
		{3, "chat scripted", func() {
			code, body := call("POST /api/v1/agent/chat (scripted)", pickScripted(), http.MethodPost, "/api/v1/agent/chat",
				`{"messages":[{"role":"user","content":"who holds power in the marketing DAO?"}]}`, "Accept", "application/json", "Cookie", inviteCookie)
			if id := runIDOf(code, body); id != "" {
				addRun(id, inviteCookie)
			}
		}},
		{2, "chat recorded", func() {
			code, body, h := s.call(client, "POST /api/v1/agent/chat (recorded)", replicas[2].proc.URL, http.MethodPost, "/api/v1/agent/chat",
				`{"messages":[{"role":"user","content":"draw the marketing DAO"}]}`, "Accept", "application/json")
			if id := runIDOf(code, body); id != "" {
				addRun(id, sessionOf(h))
			}
		}},
		{6, "SSE viewer", func() {
			if run, ok := someRun(); ok {
				s.view(pick().proc.URL, run.id, run.cookie, time.Duration(500+rand.IntN(3000))*time.Millisecond)
			}
		}},
		{3, "agent wait", func() {
			call("POST /api/v1/agents/wait", pick(), http.MethodPost, "/api/v1/agents/wait", `{"as":"soak","wait_s":1}`, "Authorization", "Bearer "+agentToken)
		}},
		{1, "publish", func() {
			n := published.Add(1)
			r := pick()
			body, _ := json.Marshal(map[string]any{"spec": proposal.Spec, "name": fmt.Sprintf("soak %d", n)})
			code, out := call("POST /api/v1/publish/prepare", r, http.MethodPost, "/api/v1/publish/prepare", string(body), "Cookie", aliceCookie, "Origin", siteOrigin)
			var p preparedAnswer
			if code != http.StatusOK || json.Unmarshal([]byte(out), &p) != nil || len(p.Transaction.Actions) != 1 {
				return
			}
			if _, err := rpc.SocialSet(p.Transaction.ReceiverID, p.Transaction.SignerID, p.Transaction.Actions[0].Args); err != nil {
				s.fail("wallet send", err.Error())
				return
			}
			call("POST /api/v1/publish", pick(), http.MethodPost, "/api/v1/publish", `{"network":"testnet","account_id":"alice.testnet","id":"`+p.ID+`"}`,
				"Cookie", aliceCookie, "Origin", siteOrigin)
		}},
	}
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	draw := func() func() {
		n := rand.IntN(total)
		for _, a := range actions {
			if n < a.weight {
				return a.do
			}
			n -= a.weight
		}
		return actions[0].do
	}

	b.Logf("soak: %s at %d actions/s over %d replicas (A, B scripted model; C recorded), through PgBouncer (transaction mode)", soakFor, rate, len(replicas))
	b.Logf("start: %s", pgState(b, db))
	sample := func(label string) {
		var parts []string
		for _, r := range replicas {
			m := scrape(b, r.metrics, "go_goroutines", "process_resident_memory_bytes")
			parts = append(parts, fmt.Sprintf("%s rss %.0f MiB goroutines %.0f", r.name, m["process_resident_memory_bytes"]/(1<<20), m["go_goroutines"]))
		}
		b.Logf("%s: %s", label, strings.Join(parts, "; "))
	}
	sample("replicas at the start")

	b.ResetTimer()
	ctx, cancel := context.WithTimeout(context.Background(), soakFor)
	defer cancel()
	inFlight := make(chan struct{}, 128) // bounds the load: a slow server gets fewer, not more
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / time.Duration(rate))
	defer tick.Stop()
	report := time.NewTicker(every)
	defer report.Stop()
	minute := 0
loop:
	for {
		select {
		case <-ctx.Done():
			break loop
		case <-report.C:
			minute++
			s.report(b, fmt.Sprintf("minute %d", minute))
			sample(fmt.Sprintf("minute %d", minute))
		case <-tick.C:
			select {
			case inFlight <- struct{}{}:
				do := draw()
				wg.Go(func() {
					defer func() { <-inFlight }()
					do()
				})
			default:
				s.skipped.Add(1)
			}
		}
	}
	wg.Wait()
	b.StopTimer()
	s.report(b, "last part")
	sample("replicas at the end")

	// Every chat ends (the longest a run may take is PETAL_RUN_MAX_S), and
	// then nothing may be held or running.
	deadline := time.Now().Add(2 * time.Minute)
	var running, held int
	for {
		_ = db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM runs WHERE status = 'running'`).Scan(&running)
		_ = db.Pool.QueryRow(context.Background(), `SELECT count(*) FROM credit_holds WHERE status = 'held'`).Scan(&held)
		if running == 0 && held == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(time.Second)
	}
	b.Logf("end: %s", pgState(b, db))
	all, fivexx := s.totals()
	b.Logf("end: %d actions, %d answers of 5xx, %d skipped (128 in flight), runs still running %d, credit holds still held %d, flowers published %d",
		s.actions.Load(), fivexx, s.skipped.Load(), running, held, published.Load())
	b.ReportMetric(float64(fivexx), "5xx")
	b.ReportMetric(float64(all)/soakFor.Seconds(), "calls/s")
	if fivexx > 0 || running > 0 || held > 0 {
		b.Errorf("the soak ends with %d answers of 5xx, %d runs running and %d holds held: all must be 0", fivexx, running, held)
	}
}

// soakStats counts every answer by route: latencies for the current part,
// errors by status and code for the whole soak and the current part.
type soakStats struct {
	mu      sync.Mutex
	lat     map[string][]time.Duration
	errs    map[string]int // "route status code", this part
	allErrs map[string]int
	sample  map[string]string // one message of each error, for the report
	all     int
	fivexx  int
	actions atomic.Int64
	skipped atomic.Int64
}

func newSoakStats() *soakStats {
	return &soakStats{lat: map[string][]time.Duration{}, errs: map[string]int{}, allErrs: map[string]int{}, sample: map[string]string{}}
}

// crowdAddress is one of the crowd the load comes from: the replicas trust
// loopback as a proxy (Cloudflare's, as a site behind it would), so each
// call's cf-connecting-ip is its address.
func crowdAddress() string { return fmt.Sprintf("10.7.%d.%d", rand.IntN(8), 1+rand.IntN(250)) }

func (s *soakStats) call(client *http.Client, route, base, method, path, body string, headers ...string) (int, string, http.Header) {
	s.actions.Add(1)
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, base+path, r)
	if err != nil {
		s.fail(route, err.Error())
		return 0, "", nil
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Cf-Connecting-Ip", crowdAddress())
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	start := time.Now()
	res, err := client.Do(req)
	if err != nil {
		s.fail(route, "transport: "+err.Error())
		return 0, "", nil
	}
	b, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	res.Body.Close()
	took := time.Since(start)
	if err != nil {
		s.fail(route, "reading the answer: "+err.Error())
		return res.StatusCode, "", res.Header
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all++
	s.lat[route] = append(s.lat[route], took)
	if res.StatusCode >= 400 {
		var e struct {
			Error struct{ Code, Message string } `json:"error"`
		}
		_ = json.Unmarshal(b, &e)
		key := fmt.Sprintf("%s %d %s", route, res.StatusCode, e.Error.Code)
		if _, ok := s.sample[key]; !ok {
			s.sample[key] = e.Error.Message
		}
		s.errs[key]++
		s.allErrs[key]++
		if res.StatusCode >= 500 {
			s.fivexx++
		}
	}
	return res.StatusCode, string(b), res.Header
}

// fail counts a call that got no answer at all: as bad as a 5xx.
func (s *soakStats) fail(route, why string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(why) > 120 {
		why = why[:120]
	}
	key := route + " no answer: " + why
	s.errs[key]++
	s.allErrs[key]++
	s.fivexx++
}

// view is a viewer joining a run's event stream and leaving after stay (or
// at the run's end).
func (s *soakStats) view(base, run, cookie string, stay time.Duration) {
	s.actions.Add(1)
	ctx, cancel := context.WithTimeout(context.Background(), stay)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/api/v1/agent/runs/"+run, nil)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Cookie", cookie)
	req.Header.Set("Cf-Connecting-Ip", crowdAddress())
	start := time.Now()
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		if ctx.Err() == nil {
			s.fail("SSE /api/v1/agent/runs/:id", err.Error())
		}
		return
	}
	defer res.Body.Close()
	first := time.Since(start)
	sc := bufio.NewScanner(res.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
	}
	if err := sc.Err(); err != nil && ctx.Err() == nil {
		s.fail("SSE /api/v1/agent/runs/:id", "the stream broke: "+err.Error())
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.all++
	s.lat["SSE /api/v1/agent/runs/:id (first byte)"] = append(s.lat["SSE /api/v1/agent/runs/:id (first byte)"], first)
	if res.StatusCode >= 400 {
		key := fmt.Sprintf("SSE /api/v1/agent/runs/:id %d", res.StatusCode)
		s.errs[key]++
		s.allErrs[key]++
		if res.StatusCode >= 500 {
			s.fivexx++
		}
	}
}

// report logs this part's p50/p99 per route and its errors, then starts a
// new part.
func (s *soakStats) report(b *testing.B, label string) {
	s.mu.Lock()
	lat, errs := s.lat, s.errs
	s.lat, s.errs = map[string][]time.Duration{}, map[string]int{}
	s.mu.Unlock()
	routes := make([]string, 0, len(lat))
	for r := range lat {
		routes = append(routes, r)
	}
	sort.Strings(routes)
	var lines []string
	for _, r := range routes {
		p50, p99 := p50p99(lat[r])
		lines = append(lines, fmt.Sprintf("  %-48s n %5d  p50 %7.1f ms  p99 %7.1f ms", r, len(lat[r]), p50, p99))
	}
	keys := make([]string, 0, len(errs))
	for k := range errs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("  error: %s × %d (%s)", k, errs[k], s.sampleOf(k)))
	}
	b.Logf("%s:\n%s", label, strings.Join(lines, "\n"))
}

func (s *soakStats) sampleOf(key string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sample[key]
}

func (s *soakStats) totals() (all, fivexx int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.all, s.fivexx
}

// sessionOf is the session cookie an answer set, as a Cookie header.
func sessionOf(h http.Header) string {
	for _, c := range (&http.Response{Header: h}).Cookies() {
		if c.Name == "__Host-petal_session" {
			return c.Name + "=" + c.Value
		}
	}
	return ""
}

func runIDOf(code int, body string) string {
	if code != http.StatusAccepted {
		return ""
	}
	var started struct {
		RunID string `json:"run_id"`
	}
	_ = json.Unmarshal([]byte(body), &started)
	return started.RunID
}

// pgState is PostgreSQL's side: connections by state, and the largest tables.
func pgState(tb testing.TB, db *pgtest.DB) string {
	ctx := context.Background()
	var conns []string
	rows, err := db.Pool.Query(ctx, `SELECT coalesce(state, 'none'), count(*) FROM pg_stat_activity WHERE datname = current_database() GROUP BY 1 ORDER BY 1`)
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var state string
		var n int
		if err := rows.Scan(&state, &n); err != nil {
			tb.Fatal(err)
		}
		conns = append(conns, state+" "+strconv.Itoa(n))
	}
	rows.Close()
	var tables []string
	rows, err = db.Pool.Query(ctx, `SELECT relname, pg_total_relation_size(relid) FROM pg_stat_user_tables ORDER BY 2 DESC LIMIT 8`)
	if err != nil {
		tb.Fatal(err)
	}
	for rows.Next() {
		var name string
		var size int64
		if err := rows.Scan(&name, &size); err != nil {
			tb.Fatal(err)
		}
		tables = append(tables, fmt.Sprintf("%s %d KiB", name, size>>10))
	}
	rows.Close()
	return "connections " + strings.Join(conns, ", ") + "; largest tables " + strings.Join(tables, ", ")
}

// decodeOK sends one request and decodes its 200 answer into out.
func decodeOK(tb testing.TB, base, method, path, body string, headers []string, out any) {
	tb.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		tb.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		tb.Fatalf("%s %s: %d %s", method, path, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		tb.Fatalf("%s %s: %v", method, path, err)
	}
}

// mintInviteTB runs `petal invite mint` as its own process, on db.
func mintInviteTB(tb testing.TB, db *pgtest.DB, usd string) string {
	tb.Helper()
	cmd := exec.Command(petalBinary(tb), "invite", "mint", usd, "--json")
	cmd.Env = append(os.Environ(), "DATABASE_URL="+db.URL, "PETAL_LOG_FORMAT=text")
	out, err := cmd.Output()
	if err != nil {
		tb.Fatalf("petal invite mint: %v %s", err, out)
	}
	var m minted
	if err := json.Unmarshal(out, &m); err != nil || m.Token == "" {
		tb.Fatalf("petal invite mint said %s", out)
	}
	return m.Token
}

// inviteSessionTB puts the invite in a new session, and returns its cookie.
func inviteSessionTB(tb testing.TB, base, token string) string {
	tb.Helper()
	return sessionFrom(tb, base+"/api/v1/auth/invite", `{"token":"`+token+`"}`)
}

// signInAliceTB is signInAlice for a benchmark: alice.testnet's NEP-413
// vector, verified against the fake NEAR node.
func signInAliceTB(tb testing.TB, p *testPetal) string {
	tb.Helper()
	v := loadVectors(tb)[0]
	issue(tb, p, v.NonceBase64, v.Recipient, 5*time.Minute)
	return sessionFrom(tb, p.URL+"/api/v1/auth/verify", verifyBody("testnet", vectorProof(v, v.SignatureBase64)))
}

// sessionFrom posts body to url from the site's own page and returns the
// session cookie its answer set.
func sessionFrom(tb testing.TB, url, body string) string {
	tb.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Origin", siteOrigin)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		tb.Fatal(err)
	}
	defer res.Body.Close()
	c := cookieOf(res, "__Host-petal_session")
	if res.StatusCode != http.StatusOK || c == nil {
		b, _ := io.ReadAll(res.Body)
		tb.Fatalf("%s: %d %s", url, res.StatusCode, b)
	}
	return "__Host-petal_session=" + c.Value
}
