package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
	"github.com/petal-near/petal/ports"
)

const marketingMap = "near:mainnet:marketing.sputnik-dao.near"

// aFlower is a flower/v1 of the shipped members reading (stored at start),
// top petals varying the spec; it returns the record's canonical JSON, id and
// spec sha256.
func aFlower(t *testing.T, maker, name string, top int) (record []byte, id, specSHA string) {
	t.Helper()
	sh := snapshotsapp.ShippedSnapshots()[0]
	spec, err := specs.Propose(&sh.Snapshot, sh.SHA256, fmt.Sprintf("top %d", top))
	if err != nil {
		t.Fatal(err)
	}
	f := published.Flower{Schema: published.Schema, Spec: spec, Snapshot: sh.SHA256, Name: name, About: "Sputnik DAO members on NEAR",
		Map: published.MapOf(sh.Snapshot.Chain, sh.Snapshot.Params), MadeBy: maker, MadeAt: "2026-11-30T12:00:00Z"}
	id, record, err = f.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	specSHA, _, err = specs.Name(spec)
	if err != nil {
		t.Fatal(err)
	}
	return record, id, specSHA
}

// publishElsewhere writes a record into the fake chain's SocialDB as the
// maker's own signed set would, under key id.
func publishElsewhere(t *testing.T, fake *nearrpctest.Server, maker, id string, record []byte) {
	t.Helper()
	args, _ := json.Marshal(map[string]any{"data": map[string]any{maker: map[string]any{"petal": map[string]any{"flower": map[string]any{id: string(record)}}}}})
	if _, err := fake.SocialSet("social.near", maker, args); err != nil {
		t.Fatal(err)
	}
}

type mapAnswer struct {
	Source string `json:"source"`
	Views  []struct {
		SHA     string `json:"sha"`
		Map     string `json:"map"`
		Name    *string
		Picture string `json:"picture"`
		MadeBy  string `json:"made_by"`
	} `json:"views"`
	Groups     []any   `json:"groups"`
	Pairs      []any   `json:"pairs"`
	NextCursor *string `json:"next_cursor"`
}

func getMap(t *testing.T, p *testPetal, path string) mapAnswer {
	t.Helper()
	res, body := p.do(t, http.MethodGet, path, "")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s: %d %s", path, res.StatusCode, body)
	}
	var m mapAnswer
	if err := json.Unmarshal([]byte(body), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMapSyncKeepsFlowersPublishedElsewhereAndRefusesMalformedOnes(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	if m := getMap(t, p, "/api/v1/map"); len(m.Views) != 0 || m.Groups == nil || m.Pairs == nil || m.Source != "published" {
		t.Fatalf("an empty site's map: %+v", m)
	}

	good, goodID, goodSpec := aFlower(t, "alice.near", "Alice's view", 4)
	publishElsewhere(t, fake, "alice.near", goodID, good)
	// Malformed: not a flower at all; filed under another id; made by someone else.
	publishElsewhere(t, fake, "bob.near", strings.Repeat("b", 64), []byte(`{"schema":"flower/v1","spec":"nope"}`))
	other, _, _ := aFlower(t, "carol.near", "", 5)
	publishElsewhere(t, fake, "carol.near", strings.Repeat("c", 64), other)
	dave, daveID, _ := aFlower(t, "erin.near", "", 3)
	publishElsewhere(t, fake, "dave.near", daveID, dave)

	kept, err := p.Svc.MapSync.Run(t.Context())
	if err != nil || kept != 1 {
		t.Fatalf("sync kept %d (%v), want 1", kept, err)
	}
	store := postgres.NewPublishedFlowerRepository(p.DB.DB)
	k, err := store.Get(t.Context(), goodID)
	if err != nil || k.Came != published.CameSynced || k.Status != published.StatusOK || k.Maker != "alice.near" || string(k.Record) != string(good) {
		t.Fatalf("kept %+v %v", k, err)
	}
	for _, id := range []string{strings.Repeat("b", 64), strings.Repeat("c", 64), daveID} {
		if _, err := store.Get(t.Context(), id); !errs.Is(err, errs.NotFound) {
			t.Fatalf("a malformed record %s was kept: %v", id, err)
		}
	}
	// Visible at once on the replica that kept it.
	m := getMap(t, p, "/api/v1/map")
	if len(m.Views) != 1 || m.Views[0].SHA != goodSpec || m.Views[0].Map != marketingMap || m.Views[0].MadeBy != "alice.near" {
		t.Fatalf("map after the sync: %+v", m)
	}
	// A second run finds nothing new and changes nothing.
	if kept, err := p.Svc.MapSync.Run(t.Context()); err != nil || kept != 0 {
		t.Fatalf("second sync kept %d (%v)", kept, err)
	}

	// A flower of a reading not stored here is kept as snapshot_missing and
	// drawn nowhere, until the reading is stored and a sync sees it.
	tally := snapshots.TallyMembers(snapshots.Mainnet, []snapshots.DAORole{{Name: "council", Members: []string{"alice.near", "zed.near"}}})
	later := snapshots.Snapshot{Schema: snapshots.Schema, Network: "near-dao-members", Params: json.RawMessage(`{"chain":"near:mainnet","dao":"later.sputnik-dao.near"}`),
		Chain: snapshots.Mainnet, Block: snapshots.Block{Height: 2, Hash: "h2", Time: "2026-11-20T12:00:00Z"}, Title: "Members of later.sputnik-dao.near",
		Groups: tally.Groups, Accounts: tally.Accounts, Source: snapshots.Source{Calls: []snapshots.Call{}}}
	laterSHA, _, err := snapshots.Name(later)
	if err != nil {
		t.Fatal(err)
	}
	lateRecord, lateID := flowerOfReading(t, later, laterSHA, "zed.near")
	publishElsewhere(t, fake, "zed.near", lateID, lateRecord)
	if kept, err := p.Svc.MapSync.Run(t.Context()); err != nil || kept != 1 {
		t.Fatalf("sync of a flower whose snapshot is missing kept %d (%v)", kept, err)
	}
	if k, err := store.Get(t.Context(), lateID); err != nil || k.Status != published.StatusSnapshotMissing {
		t.Fatalf("kept %+v %v", k, err)
	}
	if m := getMap(t, p, "/api/v1/map"); len(m.Views) != 1 {
		t.Fatalf("a flower whose snapshot is missing is drawn: %+v", m)
	}
	storeReading(t, p, later)
	if _, err := p.Svc.MapSync.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if k, err := store.Get(t.Context(), lateID); err != nil || k.Status != published.StatusOK {
		t.Fatalf("after its snapshot came: %+v %v", k, err)
	}
	if m := getMap(t, p, "/api/v1/map"); len(m.Views) != 2 || m.Views[1].Map != "near:mainnet:later.sputnik-dao.near" {
		t.Fatalf("the flower whose snapshot came is not drawn: %+v", m)
	}

	// A walk goes on from where the last run stopped (on any replica): past
	// the last account it finds nothing, and starts again the run after.
	positions := postgres.NewJobPositionRepository(p.DB.DB)
	if at, err := positions.Position(t.Context(), "map_sync", "near:mainnet"); err != nil || at != 0 {
		t.Fatalf("a finished walk is at %d (%v)", at, err)
	}
	if err := positions.SetPosition(t.Context(), "map_sync", "near:mainnet", 1000); err != nil {
		t.Fatal(err)
	}
	yet, yetID, _ := aFlower(t, "yet.near", "", 6)
	publishElsewhere(t, fake, "yet.near", yetID, yet)
	if kept, err := p.Svc.MapSync.Run(t.Context()); err != nil || kept != 0 {
		t.Fatalf("a walk past the last account kept %d (%v)", kept, err)
	}
	if kept, err := p.Svc.MapSync.Run(t.Context()); err != nil || kept != 1 {
		t.Fatalf("the walk after kept %d (%v)", kept, err)
	}
	// Every read was one of SocialDB's view methods.
	for _, c := range fake.Calls() {
		if (c.Contract != "social.near" && c.Contract != "v1.social08.testnet") || (c.Function != "get" && c.Function != "keys" && c.Function != "get_accounts_paged") {
			t.Fatalf("the sync read something else: %+v", c)
		}
	}
}

// mapEvidence is what a failed map assertion needs to say which way it went
// wrong: the flowers kept and their status, the sync's records and the
// index's builds by outcome (a failed build answers from the index before
// it). TestMapListsCardsAndPictures failed once in a full run and never
// again under load; its next failure should say why.
func mapEvidence(t *testing.T, p *testPetal) string {
	t.Helper()
	var b strings.Builder
	rows, err := p.DB.Pool.Query(t.Context(), `SELECT id, status, came FROM published_flowers ORDER BY id`)
	if err == nil {
		for rows.Next() {
			var id, status, came string
			if rows.Scan(&id, &status, &came) == nil {
				fmt.Fprintf(&b, "flower %s %s %s\n", id, status, came)
			}
		}
		rows.Close()
	}
	scraped := scrapeOf(t, p)
	for _, line := range strings.Split(scraped, "\n") {
		if strings.HasPrefix(line, "petal_map_builds_total") || strings.HasPrefix(line, "petal_map_sync_records_total") || strings.HasPrefix(line, "petal_map_items") {
			b.WriteString(line + "\n")
		}
	}
	return b.String()
}

func TestMapListsCardsAndPictures(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	first, firstID, firstSpec := aFlower(t, "alice.near", "First", 4)
	publishElsewhere(t, fake, "alice.near", firstID, first)
	if _, err := p.Svc.MapSync.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	second, secondID, secondSpec := aFlower(t, "bob.near", "", 5)
	publishElsewhere(t, fake, "bob.near", secondID, second)
	if _, err := p.Svc.MapSync.Run(t.Context()); err != nil {
		t.Fatal(err)
	}

	res, body := p.do(t, http.MethodGet, "/api/v1/maps", "")
	var maps struct {
		Maps []struct {
			ID       string  `json:"id"`
			Name     *string `json:"name"`
			Address  *string `json:"address"`
			Picture  string  `json:"picture"`
			Mark     any     `json:"mark"`
			Keys     []struct{ Label, Swatch string }
			Readings []struct {
				Snapshot string `json:"snapshot"`
				MadeBy   string `json:"made_by"`
				Drawings []struct {
					SHA string `json:"sha"`
				} `json:"drawings"`
			} `json:"readings"`
		} `json:"maps"`
		NextCursor *string `json:"next_cursor"`
	}
	if err := json.Unmarshal([]byte(body), &maps); err != nil || res.StatusCode != 200 || len(maps.Maps) != 1 {
		t.Fatalf("maps: %d %s\n%s", res.StatusCode, body, mapEvidence(t, p))
	}
	c := maps.Maps[0]
	if c.ID != marketingMap || c.Name == nil || *c.Name != "First" || c.Mark != nil || len(c.Keys) == 0 || len(c.Readings) != 1 ||
		c.Readings[0].MadeBy != "alice.near" || len(c.Readings[0].Drawings) != 2 || c.Readings[0].Drawings[0].SHA != firstSpec ||
		c.Readings[0].Drawings[1].SHA != secondSpec || !strings.Contains(c.Picture, secondSpec) || maps.NextCursor != nil {
		t.Fatalf("card: %s\n%s", body, mapEvidence(t, p))
	}
	if res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(marketingMap), ""); res.StatusCode != 200 || !strings.Contains(body, `"map":{"id":"`+marketingMap) {
		t.Fatalf("one map: %d %s", res.StatusCode, body)
	}
	// encodeURIComponent's form (%3A), and an id in another case than its one form.
	if res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.QueryEscape(marketingMap), ""); res.StatusCode != 200 || !strings.Contains(body, `"id":"`+marketingMap) {
		t.Fatalf("one map, its id fully escaped: %d %s", res.StatusCode, body)
	}
	if res, _ := p.do(t, http.MethodGet, "/api/v1/maps/near:mainnet:nothing.near", ""); res.StatusCode != 404 {
		t.Fatalf("a map with nothing on it: %d", res.StatusCode)
	}
	if res, _ := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(marketingMap)+"/proposals", ""); res.StatusCode != 404 {
		t.Fatalf("proposals never read: %d", res.StatusCode)
	}
	// Paging: one view a page, then the next.
	page := getMap(t, p, "/api/v1/map/views?limit=1")
	if len(page.Views) != 1 || page.NextCursor == nil || page.Views[0].SHA != firstSpec {
		t.Fatalf("first page %+v", page)
	}
	if next := getMap(t, p, "/api/v1/map/views?limit=1&cursor="+*page.NextCursor); len(next.Views) != 1 || next.Views[0].SHA != secondSpec || next.NextCursor != nil {
		t.Fatalf("second page %+v", next)
	}
	if res, _ := p.do(t, http.MethodGet, "/api/v1/maps?limit=0", ""); res.StatusCode != 400 {
		t.Fatalf("limit 0: %d", res.StatusCode)
	}

	// The picture, as the list gives its address.
	res, svg := p.do(t, http.MethodGet, c.Picture, "")
	etag := res.Header.Get("ETag")
	if res.StatusCode != 200 || !strings.HasPrefix(res.Header.Get("Content-Type"), "image/svg+xml") || !strings.Contains(svg, "<svg") ||
		!strings.Contains(res.Header.Get("Cache-Control"), "immutable") || len(etag) != 66 || res.Header.Get("Access-Control-Allow-Origin") != "*" {
		t.Fatalf("picture: %d %v", res.StatusCode, res.Header)
	}
	if res, _ := p.do(t, http.MethodGet, c.Picture, "", "If-None-Match", etag); res.StatusCode != http.StatusNotModified {
		t.Fatalf("revalidation: %d", res.StatusCode)
	}
	short := "/api/v1/map/" + secondSpec + "/svg?view=" + specs.DefaultViewName()[:12]
	if res, _ := p.do(t, http.MethodGet, short, ""); res.StatusCode != 200 || res.Header.Get("ETag") != etag {
		t.Fatalf("the default's 12-character prefix: %d %s", res.StatusCode, res.Header.Get("ETag"))
	}
	for _, bad := range []string{
		"/api/v1/map/" + strings.Repeat("0", 64) + "/svg",                    // not on the map
		"/api/v1/map/nothex/svg",                                             // not a hash
		"/api/v1/map/" + secondSpec + "/svg?view=" + strings.Repeat("9", 64), // a view nobody kept
		"/api/v1/map/" + secondSpec + "/svg?look=0",                          // a look petal doesn't draw
		"/api/v1/map/" + secondSpec + "/svg?paint=tol-bright",                // another palette than the view's
	} {
		if res, body := p.do(t, http.MethodGet, bad, ""); res.StatusCode != 404 || !strings.Contains(body, `"not_found"`) {
			t.Fatalf("%s: %d %s", bad, res.StatusCode, body)
		}
	}
	if res, _ := p.do(t, http.MethodGet, "/api/v1/maps?view="+strings.Repeat("9", 64), ""); res.StatusCode != 404 {
		t.Fatalf("a list through a view nobody kept: %d", res.StatusCode)
	}
}

func TestTwoReplicasSeeTheSameMap(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	env := map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL}
	a := startPetal(t, env)
	b := startPetalOn(t, env, a.DB, a.DB.DB)
	// Both have built their map before the flower comes.
	if len(getMap(t, a, "/api/v1/map").Views)+len(getMap(t, b, "/api/v1/map").Views) != 0 {
		t.Fatal("a map before any flower")
	}
	record, id, spec := aFlower(t, "alice.near", "Seen twice", 4)
	publishElsewhere(t, fake, "alice.near", id, record)
	if _, err := a.Svc.MapSync.Run(t.Context()); err != nil {
		t.Fatal(err)
	}
	if m := getMap(t, a, "/api/v1/map"); len(m.Views) != 1 || m.Views[0].SHA != spec {
		t.Fatalf("replica a: %+v", m)
	}
	// Replica b hears the NOTIFY; no request of b's reads the store for it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := getMap(t, b, "/api/v1/map")
		if len(m.Views) == 1 && m.Views[0].SHA == spec {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica b never saw the flower: %+v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, ba := a.do(t, http.MethodGet, "/api/v1/maps", "")
	_, bb := b.do(t, http.MethodGet, "/api/v1/maps", "")
	if ba != bb {
		t.Fatalf("the replicas' maps differ:\n%s\n%s", ba, bb)
	}
}

func TestPublicSiteServesTheShippedMapWithNoChainRead(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_PUBLIC": "1", "PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	m := getMap(t, p, "/api/v1/map")
	if m.Source != "shipped" || len(m.Views) == 0 || m.Views[0].Map != marketingMap {
		t.Fatalf("public map: %+v", m)
	}
	if res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(marketingMap), ""); res.StatusCode != 200 {
		t.Fatalf("public map card: %d %s", res.StatusCode, body)
	}
	if res, _ := p.do(t, http.MethodGet, m.Views[0].Picture, ""); res.StatusCode != 200 {
		t.Fatalf("public picture: %d", res.StatusCode)
	}
	if calls := fake.Calls(); len(calls) != 0 {
		t.Fatalf("a public site read the chain %d times: %+v", len(calls), calls[0])
	}
}

// storeReading stores a reading as this site's own and returns its name.
func storeReading(t *testing.T, p *testPetal, s snapshots.Snapshot) string {
	t.Helper()
	sha, canonical, err := snapshots.Name(s)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snapshotsapp.StoreCanonical(t.Context(), postgres.NewSnapshotRepository(p.DB.DB), s, sha, canonical, snapshotsapp.OriginThisSite); err != nil {
		t.Fatal(err)
	}
	return sha
}

// flowerOfReading is a flower/v1 of a stored reading, by maker.
func flowerOfReading(t *testing.T, s snapshots.Snapshot, sha, maker string) (record []byte, id string) {
	t.Helper()
	spec, err := specs.Propose(&s, sha, "")
	if err != nil {
		t.Fatal(err)
	}
	f := published.Flower{Schema: published.Schema, Spec: spec, Snapshot: sha, About: "a reading", Map: published.MapOf(s.Chain, s.Params),
		MadeBy: maker, MadeAt: "2026-11-30T12:00:00Z"}
	id, record, err = f.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	return record, id
}

func TestHiddenMapsAreInNoListButAnswerByID(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	const hiddenDAO = "hidden-example.sputnikv2.testnet"
	tally := snapshots.TallyMembers(snapshots.Testnet, []snapshots.DAORole{{Name: "council", Members: []string{"alice.testnet", "bob.testnet"}}})
	reading := snapshots.Snapshot{Schema: snapshots.Schema, Network: "near-dao-members", Params: json.RawMessage(`{"chain":"near:testnet","dao":"` + hiddenDAO + `"}`),
		Chain: snapshots.Testnet, Block: snapshots.Block{Height: 1, Hash: "h", Time: "2026-11-01T12:00:00Z"}, Title: "Members of " + hiddenDAO,
		Groups: tally.Groups, Accounts: tally.Accounts, Source: snapshots.Source{Calls: []snapshots.Call{}}}
	sha := storeReading(t, p, reading)
	record, id := flowerOfReading(t, reading, sha, "alice.testnet")
	args, _ := json.Marshal(map[string]any{"data": map[string]any{"alice.testnet": map[string]any{"petal": map[string]any{"flower": map[string]any{id: string(record)}}}}})
	if _, err := fake.SocialSet("v1.social08.testnet", "alice.testnet", args); err != nil {
		t.Fatal(err)
	}
	shown, shownID, _ := aFlower(t, "carol.near", "", 4)
	publishElsewhere(t, fake, "carol.near", shownID, shown)
	if kept, err := p.Svc.MapSync.Run(t.Context()); err != nil || kept != 2 {
		t.Fatalf("sync kept %d (%v)", kept, err)
	}
	hiddenID := "near:testnet:" + hiddenDAO
	for _, path := range []string{"/api/v1/map", "/api/v1/map/views", "/api/v1/maps"} {
		_, body := p.do(t, http.MethodGet, path, "")
		if strings.Contains(body, hiddenDAO) || !strings.Contains(body, marketingMap) {
			t.Fatalf("%s lists the hidden map (or not the other): %s", path, body)
		}
	}
	res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(hiddenID), "")
	var one struct {
		Map struct {
			ID     string `json:"id"`
			Hidden *struct {
				Why     string `json:"why"`
				Decided string `json:"decided"`
			} `json:"hidden"`
		} `json:"map"`
	}
	if err := json.Unmarshal([]byte(body), &one); err != nil || res.StatusCode != 200 || one.Map.ID != hiddenID || one.Map.Hidden == nil ||
		!strings.Contains(one.Map.Hidden.Why, "example") || one.Map.Hidden.Decided == "" {
		t.Fatalf("the hidden map by id: %d %s", res.StatusCode, body)
	}
	// Nothing is deleted: the flower is kept.
	if _, err := postgres.NewPublishedFlowerRepository(p.DB.DB).Get(t.Context(), id); err != nil {
		t.Fatal(err)
	}
}

func TestMapProposalsFromTheNewestProposalsReading(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	reading := func(at string, status string) snapshots.Snapshot {
		tally, err := snapshots.TallyVotes(snapshots.Mainnet, snapshots.Proposals{Last: 1, List: []snapshots.Proposal{{ID: 0, Proposer: "alice.near",
			Description: "Fund the guild", Kind: json.RawMessage(`"Vote"`), Status: status, SubmissionTime: "1700000000000000000",
			Votes: map[string]string{"bob.near": "Approve"}}}})
		if err != nil {
			t.Fatal(err)
		}
		return snapshots.Snapshot{Schema: snapshots.Schema, Network: "near-dao-proposals", Params: json.RawMessage(`{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}`),
			Chain: snapshots.Mainnet, Block: snapshots.Block{Height: 1, Hash: "h", Time: at}, Title: "Votes in marketing.sputnik-dao.near",
			Groups: tally.Groups, Accounts: tally.Accounts, Source: snapshots.Source{Calls: []snapshots.Call{}}, Detail: tally.Detail}
	}
	for _, r := range []snapshots.Snapshot{reading("2026-11-02T00:00:00Z", "Approved"), reading("2026-11-01T00:00:00Z", "InProgress")} {
		sha := storeReading(t, p, r)
		record, id := flowerOfReading(t, r, sha, "alice.near")
		publishElsewhere(t, fake, "alice.near", id, record)
	}
	if kept, err := p.Svc.MapSync.Run(t.Context()); err != nil || kept != 2 {
		t.Fatalf("kept %d (%v)", kept, err)
	}
	res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(marketingMap)+"/proposals", "")
	var got struct {
		Proposals struct {
			Schema    string `json:"schema"`
			Proposals []struct {
				Outcome string `json:"outcome"`
				Votes   []struct {
					Account string  `json:"account"`
					Vote    *string `json:"vote"`
				} `json:"votes"`
			} `json:"proposals"`
		} `json:"proposals"`
	}
	if err := json.Unmarshal([]byte(body), &got); err != nil || res.StatusCode != 200 || got.Proposals.Schema != "proposals/v2" ||
		len(got.Proposals.Proposals) != 1 || got.Proposals.Proposals[0].Outcome != "approved" || len(got.Proposals.Proposals[0].Votes) != 1 ||
		got.Proposals.Proposals[0].Votes[0].Account != "near:mainnet:bob.near" || *got.Proposals.Proposals[0].Votes[0].Vote != "for" {
		_, cards := p.do(t, http.MethodGet, "/api/v1/maps", "")
		t.Fatalf("proposals: %d %s\nmaps: %s", res.StatusCode, body, cards)
	}
}

// A replica whose listener lost its connection may miss a NOTIFY; after it
// reconnects it reads the whole store again, so it still sees the flower.
func TestAReplicaThatMissedANotificationStillSeesTheFlower(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	env := map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL}
	a := startPetal(t, env)
	b := startPetalOn(t, env, a.DB, a.DB.DB)
	if len(getMap(t, b, "/api/v1/map").Views) != 0 {
		t.Fatal("a map before any flower")
	}
	// Cut every listener of the flowers' channel, then keep a flower while
	// they reconnect: its NOTIFY may reach nobody.
	var cut int
	if err := a.DB.DB.Pool.QueryRow(t.Context(), `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND query = 'LISTEN `+ports.FlowersChannel+`'`).Scan(&cut); err != nil || cut < 2 {
		t.Fatalf("cut %d listeners (%v), want both replicas'", cut, err)
	}
	record, id, spec := aFlower(t, "alice.near", "Missed", 4)
	publishElsewhere(t, fake, "alice.near", id, record)
	if kept, err := a.Svc.MapSync.Run(t.Context()); err != nil || kept != 1 {
		t.Fatalf("kept %d (%v)", kept, err)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		m := getMap(t, b, "/api/v1/map")
		if len(m.Views) == 1 && m.Views[0].SHA == spec {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica b never saw the flower: %+v", m)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
