package main

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/snapshots"
)

// relReading is a reading of a group made up for a test: its reader, the
// block time it was read at, and its accounts (name: weight).
type relReading struct {
	group, reader, at string
	accounts          [][2]string
}

func (r relReading) snapshot() snapshots.Snapshot {
	_, address, _ := strings.Cut(strings.TrimPrefix(r.group, "near:"), ":")
	s := snapshots.Snapshot{
		Schema: snapshots.Schema, Network: r.reader,
		Params: json.RawMessage(fmt.Sprintf(`{"chain":"near:mainnet","target":%q}`, address)),
		Chain:  snapshots.Mainnet,
		Block:  snapshots.Block{Height: 7, Hash: "h-" + r.at, Time: r.at},
		Title:  "Holders of " + address, About: "made up for a test",
		Groups: []snapshots.Group{{ID: "all", Label: "All"}},
		Source: snapshots.Source{Calls: []snapshots.Call{{Contract: address, Method: "read"}}},
	}
	for _, a := range r.accounts {
		s.Accounts = append(s.Accounts, snapshots.Account{ID: "near:mainnet:" + a[0], Label: a[0], Weight: a[1], Groups: []string{"all"}})
	}
	return s
}

// offerReading stores a reading and offers it to the relations index, as
// keeping a flower of it does.
func offerReading(t testing.TB, p *testPetal, r relReading) string {
	t.Helper()
	s := r.snapshot()
	sha, canonical, err := snapshots.Name(s)
	require.NoError(t, err)
	_, err = snapshotsapp.StoreCanonical(t.Context(), snapshotRepo(p), s, sha, canonical, snapshotsapp.OriginThisSite)
	require.NoError(t, err)
	_, err = p.Svc.Relations.Offer(t.Context(), r.group, sha)
	require.NoError(t, err)
	return sha
}

// relOK gets a relations route and wants 200.
func relOK(t *testing.T, p *testPetal, path, _ string) map[string]any {
	t.Helper()
	res, body := p.do(t, http.MethodGet, path, "")
	require.Equal(t, http.StatusOK, res.StatusCode, "%s: %s", path, body)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &m), body)
	return m
}

func snapshotRepo(p *testPetal) *postgres.SnapshotRepository {
	return postgres.NewSnapshotRepository(p.DB.DB)
}

func ones(names ...string) [][2]string {
	out := make([][2]string, len(names))
	for i, n := range names {
		out[i] = [2]string{n, "1"}
	}
	return out
}

const (
	relDAO1   = "near:mainnet:one.sputnik-dao.near"
	relDAO2   = "near:mainnet:two.sputnik-dao.near"
	relDAO3   = "near:mainnet:three.sputnik-dao.near"
	relDAO4   = "near:mainnet:four.sputnik-dao.near"
	relDAO5   = "near:mainnet:five.sputnik-dao.near"
	relPool   = "near:mainnet:pool.poolv1.near"
	relToken  = "near:mainnet:tok.near"
	relHidden = "near:testnet:hidden-example.sputnikv2.testnet"
)

// The hand-computed map: three DAOs sharing members (and two more), a pool
// and a token, every share and Jaccard index worked out by hand below.
func handMap(t *testing.T, p *testPetal) {
	for _, r := range []relReading{
		{relDAO1, "near-dao-members", "2026-11-01T00:00:00Z", ones("alice.near", "bob.near", "carol.near", "dave.near")},
		{relDAO2, "near-dao-members", "2026-11-01T00:00:00Z", ones("bob.near", "carol.near", "erin.near")},
		{relDAO3, "near-dao-members", "2026-11-01T00:00:00Z", ones("carol.near", "frank.near", "jack.near")},
		{relDAO4, "near-dao-members", "2026-11-01T00:00:00Z", ones("ivan.near", "jack.near")},
		{relDAO5, "near-dao-members", "2026-11-01T00:00:00Z", ones("kate.near", "liam.near")},
		{relPool, "near-staking-pool", "2026-11-01T00:00:00Z", [][2]string{{"alice.near", "6"}, {"erin.near", "2"}, {"gina.near", "2"}}},
		{relToken, "near-ft-balances", "2026-11-01T00:00:00Z", [][2]string{{"henry.near", "3"}, {"frank.near", "1"}, {"alice.near", "0.5"}}},
		// A hidden map: in no answer.
		{relHidden, "near-dao-members", "2026-11-01T00:00:00Z", ones("alice.near", "bob.near")},
	} {
		offerReading(t, p, r)
	}
}

func acct(n string) string { return "near:mainnet:" + n }

func TestRelationsHandComputed(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	handMap(t, p)

	// alice: token 0.5/4.5, pool 6/10, dao1 1/4; the hidden DAO left out.
	got := relOK(t, p, "/api/v1/relations/account-groups?account="+url.QueryEscape(acct("alice.near")), "")
	assert.Equal(t, []any{
		map[string]any{"group": relPool, "title": "Holders of pool.poolv1.near", "weight": "6", "share": "0.6", "rank": 1.0},
		map[string]any{"group": relDAO1, "title": "Holders of one.sputnik-dao.near", "weight": "1", "share": "0.25", "rank": 1.0},
		map[string]any{"group": relToken, "title": "Holders of tok.near", "weight": "0.5", "share": "0.111111111111", "rank": 3.0},
	}, got["groups"])
	// Pool ranks: erin and gina tie at 0.2, both rank 2.
	got = relOK(t, p, "/api/v1/relations/account-groups?account="+url.QueryEscape(acct("gina.near")), "")
	assert.Equal(t, "0.2", got["groups"].([]any)[0].(map[string]any)["share"])
	assert.Equal(t, 2.0, got["groups"].([]any)[0].(map[string]any)["rank"])
	got = relOK(t, p, "/api/v1/relations/account-groups?account="+url.QueryEscape(acct("henry.near")), "")
	assert.Equal(t, "0.666666666667", got["groups"].([]any)[0].(map[string]any)["share"], "3/4.5 rounded half up once")

	// dao1 and dao2 share bob and carol: 1/4 each in dao1, 1/3 in dao2.
	got = relOK(t, p, "/api/v1/relations/shared?group_a="+url.QueryEscape(relDAO1)+"&group_b="+url.QueryEscape(relDAO2), "")
	assert.Equal(t, 2.0, got["count"])
	assert.Equal(t, []any{
		map[string]any{"account": acct("bob.near"), "a": map[string]any{"weight": "1", "share": "0.25"}, "b": map[string]any{"weight": "1", "share": "0.333333333333"}},
		map[string]any{"account": acct("carol.near"), "a": map[string]any{"weight": "1", "share": "0.25"}, "b": map[string]any{"weight": "1", "share": "0.333333333333"}},
	}, got["accounts"])

	// dao3's related groups by count then Jaccard: dao1 (carol, 1/6), dao2
	// (carol, 1/5), dao4 (jack, 1/4), token (frank, 1/5).
	got = relOK(t, p, "/api/v1/relations/related?by=jaccard&group="+url.QueryEscape(relDAO3), "")
	rel := got["related"].([]any)
	require.Len(t, rel, 4)
	assert.Equal(t, map[string]any{"group": relDAO4, "title": "Holders of four.sputnik-dao.near", "shared": 1.0, "jaccard": "0.25", "weight_in_group": "0.5"}, rel[0])
	assert.Equal(t, relToken, rel[1].(map[string]any)["group"], "1/5, tok.near after two.… by id")
	assert.Equal(t, "0.2", rel[1].(map[string]any)["jaccard"])
	assert.Equal(t, "0.222222222222", rel[1].(map[string]any)["weight_in_group"], "frank's 1 of 4.5")
	assert.Equal(t, relDAO2, rel[2].(map[string]any)["group"])
	assert.Equal(t, relDAO1, rel[3].(map[string]any)["group"])
	assert.Equal(t, "0.166666666667", rel[3].(map[string]any)["jaccard"])
	got = relOK(t, p, "/api/v1/relations/related?by=weight&group="+url.QueryEscape(relDAO3), "")
	assert.Equal(t, relDAO4, got["related"].([]any)[0].(map[string]any)["group"], "jack holds half of dao4")

	// Overview: by default pairs sharing two or more: dao1–dao2 alone.
	got = relOK(t, p, "/api/v1/relations/overview", "")
	assert.Equal(t, []any{map[string]any{"a": relDAO1, "b": relDAO2, "shared": 2.0, "jaccard": "0.4"}}, got["pairs"])
	assert.Len(t, got["groups"], 2)
	got = relOK(t, p, "/api/v1/relations/overview?min_shared=1&kind=dao", "")
	assert.Len(t, got["pairs"], 4, "dao1–dao2, dao1–dao3, dao2–dao3, dao3–dao4")
	got = relOK(t, p, "/api/v1/relations/overview?min_shared=1", "")
	assert.Len(t, got["pairs"], 9)
	for _, pr := range got["pairs"].([]any) {
		for _, side := range []string{"a", "b"} {
			assert.NotEqual(t, relHidden, pr.(map[string]any)[side])
		}
	}
	// Paged two at a time, the same nine.
	var paged []any
	cursor := ""
	for range 10 {
		page := relOK(t, p, "/api/v1/relations/overview?min_shared=1&limit=2"+cursor, "")
		paged = append(paged, page["pairs"].([]any)...)
		if page["next_cursor"] == nil {
			break
		}
		cursor = "&cursor=" + url.QueryEscape(page["next_cursor"].(string))
	}
	assert.Equal(t, got["pairs"], paged)

	// /api/v1/map carries the overview's groups and pairs.
	m := getMap(t, p, "/api/v1/map")
	assert.Len(t, m.Pairs, 1)
	assert.Len(t, m.Groups, 2)

	// Refusals: unknown and hidden groups, unknown accounts, bad parameters.
	for _, c := range []struct {
		path, code, names string
	}{
		{"/api/v1/relations/shared?group_a=" + url.QueryEscape(relDAO1) + "&group_b=" + url.QueryEscape(relHidden), "not_found", "list_flowers"},
		{"/api/v1/relations/related?group=near:mainnet:nobody.near", "not_found", "list_flowers"},
		{"/api/v1/relations/account-groups?account=near:mainnet:zed.near", "not_found", "look_up"},
		{"/api/v1/relations/account-groups?account=alice", "bad_input", "account"},
		{"/api/v1/relations/related?group=" + url.QueryEscape(relDAO1) + "&by=size", "bad_input", "by"},
		{"/api/v1/relations/overview?limit=201", "bad_input", "limit"},
		{"/api/v1/relations/overview?kind=people", "bad_input", "kind"},
		{"/api/v1/relations/path?account_a=near:mainnet:alice.near&account_b=near:mainnet:bob.near&max_depth=7", "bad_input", "max_depth"},
		{"/api/v1/relations/path?account_a=near:mainnet:alice.near&account_b=near:mainnet:bob.near&budget=200001", "bad_input", "budget"},
		{"/api/v1/relations/account-groups?account=near:mainnet:alice.near&cursor=zz", "bad_input", "cursor"},
	} {
		res, body := p.do(t, http.MethodGet, c.path, "")
		assert.Contains(t, body, `"code":"`+c.code+`"`, c.path)
		assert.Contains(t, body, c.names, c.path)
		if c.code == "not_found" {
			assert.Equal(t, http.StatusNotFound, res.StatusCode, c.path)
		} else {
			assert.Equal(t, http.StatusBadRequest, res.StatusCode, c.path)
		}
	}
}

func pathOf(t *testing.T, p *testPetal, a, b, extra string) map[string]any {
	t.Helper()
	return relOK(t, p, "/api/v1/relations/path?account_a="+url.QueryEscape(acct(a))+"&account_b="+url.QueryEscape(acct(b))+extra, "")
}

func TestPowerPathLengths(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	handMap(t, p)

	// Length 1: alice and bob are both in dao1 (the hidden DAO they share
	// is never walked).
	got := pathOf(t, p, "alice.near", "bob.near", "")
	assert.Equal(t, true, got["found"])
	assert.Equal(t, []any{map[string]any{"hops": []any{
		map[string]any{"account": acct("alice.near"), "via_group": nil, "weight_in_group": nil},
		map[string]any{"account": acct("bob.near"), "via_group": relDAO1, "weight_in_group": "1"},
	}}}, got["paths"])
	assert.Equal(t, false, got["exhausted"])

	// Length 3: ivan –dao4– jack –dao3– carol –dao2– erin, the one shortest.
	got = pathOf(t, p, "ivan.near", "erin.near", "")
	assert.Equal(t, []any{map[string]any{"hops": []any{
		map[string]any{"account": acct("ivan.near"), "via_group": nil, "weight_in_group": nil},
		map[string]any{"account": acct("jack.near"), "via_group": relDAO4, "weight_in_group": "1"},
		map[string]any{"account": acct("carol.near"), "via_group": relDAO3, "weight_in_group": "1"},
		map[string]any{"account": acct("erin.near"), "via_group": relDAO2, "weight_in_group": "1"},
	}}}, got["paths"])
	// Depth 2 is not enough for it.
	got = pathOf(t, p, "ivan.near", "erin.near", "&max_depth=2")
	assert.Equal(t, false, got["found"])
	assert.Equal(t, []any{}, got["paths"])

	// Several shortest paths: gina –pool– alice –token– henry, and only that
	// (the pool and the token share alice alone); carol to alice: through
	// dao1 directly.
	got = pathOf(t, p, "gina.near", "henry.near", "")
	require.Len(t, got["paths"], 1)
	assert.Len(t, got["paths"].([]any)[0].(map[string]any)["hops"], 3)

	// None: kate's DAO shares nobody.
	got = pathOf(t, p, "kate.near", "alice.near", "")
	assert.Equal(t, false, got["found"])
	assert.Equal(t, false, got["exhausted"])
	assert.Equal(t, []any{}, got["paths"])

	// include_inferred says this site has no same_owner claims.
	got = pathOf(t, p, "kate.near", "alice.near", "&include_inferred=true")
	assert.Contains(t, got["notes"].([]any)[0], "no same_owner claims")
}

// On a dense made-up graph a small budget stops the search and says so; a
// large one finds the path.
func TestPowerPathBudgetStopsADenseSearch(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	rng := rand.New(rand.NewPCG(1, 2))
	const groups, members, accounts = 24, 30, 150
	in := map[string][]int{}
	for g := range groups {
		picked := map[int]bool{}
		var names []string
		for len(names) < members {
			a := rng.IntN(accounts)
			if !picked[a] {
				picked[a] = true
				names = append(names, fmt.Sprintf("u%03d.near", a))
				in[names[len(names)-1]] = append(in[names[len(names)-1]], g)
			}
		}
		offerReading(t, p, relReading{fmt.Sprintf("near:mainnet:g%02d.near", g), "near-dao-members", "2026-11-01T00:00:00Z", ones(names...)})
	}
	// Two accounts hanging off two of the dense part's accounts that share
	// no group, so the search must read whole groups to join them.
	var from, to string
	for a, ga := range in {
		for b, gb := range in {
			if a < b && !slices.ContainsFunc(ga, func(g int) bool { return slices.Contains(gb, g) }) && (from == "" || a+b < from+to) {
				from, to = a, b
			}
		}
	}
	require.NotEmpty(t, from)
	offerReading(t, p, relReading{"near:mainnet:end-a.near", "near-dao-members", "2026-11-01T00:00:00Z", ones("start.near", from)})
	offerReading(t, p, relReading{"near:mainnet:end-b.near", "near-dao-members", "2026-11-01T00:00:00Z", ones("finish.near", to)})

	got := pathOf(t, p, "start.near", "finish.near", "&budget=40")
	assert.Equal(t, false, got["found"])
	assert.Equal(t, true, got["exhausted"])
	assert.LessOrEqual(t, got["expanded"].(float64), 40.0)

	got = pathOf(t, p, "start.near", "finish.near", "&budget=200000&max_depth=6")
	assert.Equal(t, true, got["found"])
	assert.Equal(t, false, got["exhausted"])
	paths := got["paths"].([]any)
	assert.LessOrEqual(t, len(paths), 5)
	n := len(paths[0].(map[string]any)["hops"].([]any))
	for _, pa := range paths {
		assert.Len(t, pa.(map[string]any)["hops"], n, "all shortest")
	}
}

// A group's newest reading changes while readers read: each answer is the
// group wholly before or wholly after, never between.
func TestRelationsNoReaderSeesHalfARebuild(t *testing.T) {
	t.Parallel()
	p := startPetal(t, map[string]string{"PETAL_TOOL_CALLS_PER_MIN": "1000000"})
	const n = 60
	var xs, ys, all []string
	for i := range n {
		xs = append(xs, fmt.Sprintf("x%02d.near", i))
		ys = append(ys, fmt.Sprintf("y%02d.near", i))
	}
	all = append(append(all, xs...), ys...)
	offerReading(t, p, relReading{"near:mainnet:base.near", "near-dao-members", "2026-11-01T00:00:00Z", ones(all...)})
	flip := "near:mainnet:flip.near"
	offerReading(t, p, relReading{flip, "near-dao-members", "2026-11-01T00:00:00Z", ones(xs...)})

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var mu sync.Mutex
	var bad []string
	for range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var a relationsapp.SharedAnswer
				res, err := http.Get(p.URL + "/api/v1/relations/shared?limit=200&group_a=near:mainnet:base.near&group_b=" + url.QueryEscape(flip))
				if err == nil {
					if res.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", res.StatusCode)
					} else {
						err = json.NewDecoder(res.Body).Decode(&a)
					}
					res.Body.Close()
				}
				if err != nil {
					mu.Lock()
					bad = append(bad, err.Error())
					mu.Unlock()
					continue
				}
				xsSeen, ysSeen := 0, 0
				for _, s := range a.Accounts {
					if strings.HasPrefix(s.Account, acct("x")) {
						xsSeen++
					} else {
						ysSeen++
					}
					if s.B.Share != "0.016666666667" { // 1/60
						mu.Lock()
						bad = append(bad, "share "+s.B.Share)
						mu.Unlock()
					}
				}
				if a.Count != n || len(a.Accounts) != n || (xsSeen != 0 && ysSeen != 0) {
					mu.Lock()
					bad = append(bad, fmt.Sprintf("count %d, %d accounts, %d x and %d y", a.Count, len(a.Accounts), xsSeen, ysSeen))
					mu.Unlock()
				}
			}
		}()
	}
	for i := range 8 {
		set := ys
		if i%2 == 1 {
			set = xs
		}
		offerReading(t, p, relReading{flip, "near-dao-members", fmt.Sprintf("2026-11-%02dT00:00:00Z", i+2), ones(set...)})
	}
	close(stop)
	wg.Wait()
	assert.Empty(t, bad)
	// An older reading offered late changes nothing.
	offerReading(t, p, relReading{flip, "near-dao-members", "2026-10-01T00:00:00Z", ones("late.near")})
	got := relOK(t, p, "/api/v1/relations/account-groups?account="+url.QueryEscape(acct("x00.near")), "")
	assert.Len(t, got["groups"], 2, "the newest reading (xs) still holds")
}

// Every relations tool answers the same through HTTP and MCP.
func TestRelationsToolsAnswerAlikeThroughHTTPAndMCP(t *testing.T) {
	t.Parallel()
	p := startPetal(t, nil)
	handMap(t, p)
	cs, err := sdk.NewClient(&sdk.Implementation{Name: "agent", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	for _, c := range []struct {
		tool, path string
		args       map[string]any
	}{
		{relationsapp.ToolAccountGroups, "/api/v1/relations/account-groups?account=" + url.QueryEscape(acct("alice.near")), map[string]any{"account": acct("alice.near")}},
		{relationsapp.ToolSharedAccounts, "/api/v1/relations/shared?group_a=" + url.QueryEscape(relDAO1) + "&group_b=" + url.QueryEscape(relDAO2) + "&limit=1",
			map[string]any{"group_a": relDAO1, "group_b": relDAO2, "limit": 1}},
		{relationsapp.ToolRelatedGroups, "/api/v1/relations/related?group=" + url.QueryEscape(relDAO3) + "&by=weight", map[string]any{"group": relDAO3, "by": "weight"}},
		{relationsapp.ToolRelationsOverview, "/api/v1/relations/overview?min_shared=1&kind=dao", map[string]any{"min_shared": 1, "kind": "dao"}},
		{relationsapp.ToolPowerPath, "/api/v1/relations/path?account_a=" + url.QueryEscape(acct("ivan.near")) + "&account_b=" + url.QueryEscape(acct("erin.near")) + "&include_inferred=true",
			map[string]any{"account_a": acct("ivan.near"), "account_b": acct("erin.near"), "include_inferred": true}},
	} {
		viaHTTP := relOK(t, p, c.path, "")
		delete(viaHTTP, "tools_version")
		r, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: c.tool, Arguments: c.args})
		require.NoError(t, err)
		require.False(t, r.IsError, c.tool)
		var viaMCP map[string]any
		require.NoError(t, json.Unmarshal([]byte(mustJSON(t, r.StructuredContent)), &viaMCP))
		delete(viaMCP, "tools_version")
		assert.Equal(t, viaHTTP, viaMCP, c.tool)
	}
}

// A flower kept by the map's sync offers its reading: the group is there
// with the reading's accounts.
func TestRelationsIndexAFlowerKeptBySync(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	record, id, _ := aFlower(t, "alice.near", "Alice's view", 4)
	publishElsewhere(t, fake, "alice.near", id, record)
	_, err := p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	member := snapshotsapp.ShippedSnapshots()[0].Snapshot.Accounts[0].ID
	got := relOK(t, p, "/api/v1/relations/account-groups?account="+url.QueryEscape(member), "")
	assert.Equal(t, marketingMap, got["groups"].([]any)[0].(map[string]any)["group"])
	// The catch-up job finds nothing left to offer.
	n, err := p.Svc.Relations.CatchUp(t.Context())
	require.NoError(t, err)
	assert.Zero(t, n)
}
