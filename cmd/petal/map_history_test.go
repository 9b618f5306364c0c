package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
)

// A map with three readings of its DAO, published out of order: its history
// is oldest first with each reading's figures, each reader's previous beside
// it, and the map's page draws the chart with its numbers as text.
func TestMapHistoryThreeReadingsInOrder(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	mapID, shas := threeReadingsMap(t, p, fake)

	res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(mapID)+"/history", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var h struct {
		Map      string            `json:"map"`
		Readings []json.RawMessage `json:"readings"`
		Chart    string            `json:"chart"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &h))
	require.Len(t, h.Readings, 3, body)
	// 6, 2, 2: top1 0.6, Gini 0.266667, Nakamoto 1. 1, 1, 1: a third each, Gini 0, Nakamoto 2.
	// 9, 1: top1 0.9, Gini (−1 + 9)/(2·10) = 0.4, Nakamoto 1.
	for i, want := range []string{
		`{"snapshot":"` + shas[0] + `","as_of":"2026-09-01T12:00:00Z","network":"near-dao-members","title":"Members of flowers.sputnik-dao.near","count":3,"top1_share":0.6,"nakamoto":1,"gini":0.266667,"previous":null}`,
		`{"snapshot":"` + shas[1] + `","as_of":"2026-10-01T12:00:00Z","network":"near-dao-members","title":"Members of flowers.sputnik-dao.near","count":3,"top1_share":0.333333,"nakamoto":2,"gini":0,"previous":"` + shas[0] + `"}`,
		`{"snapshot":"` + shas[2] + `","as_of":"2026-11-01T12:00:00Z","network":"near-dao-members","title":"Members of flowers.sputnik-dao.near","count":2,"top1_share":0.9,"nakamoto":1,"gini":0.4,"previous":"` + shas[1] + `"}`,
	} {
		assert.JSONEq(t, want, string(h.Readings[i]), "reading %d", i)
	}
	for _, text := range []string{">0.6<", ">0.333333<", ">0.9<", ">0.4<", "1 Sep 2026", "1 Nov 2026"} {
		assert.Contains(t, h.Chart, text)
	}

	// The previous of each is what compare_figures sets beside it.
	res, body = p.do(t, http.MethodPost, "/api/v1/figures/compare", `{"a":"`+shas[1]+`","b":"`+shas[2]+`"}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	assert.Contains(t, body, `"left":{"total":1`)

	res, page := p.do(t, http.MethodGet, "/map?id="+url.QueryEscape(mapID), "", "Accept", "text/html")
	require.Equal(t, http.StatusOK, res.StatusCode)
	assert.Contains(t, page, `<svg xmlns="http://www.w3.org/2000/svg" class="history-chart"`)
	assert.Contains(t, page, `<td class="num">0.333333</td>`)
	assert.Equal(t, 1, strings.Count(page, `class="list history-table"`))
	// Each reading after the first links to its comparison with the one before.
	escMap := strings.ReplaceAll(url.QueryEscape(mapID), "%3A", "%3a") // as html/template writes it
	link := "/compare?a=" + shas[1] + "&amp;b=" + shas[2] + "&amp;map=" + escMap
	assert.Contains(t, page, `<a href="`+link+`">What changed</a>`)
	assert.Contains(t, page, "/compare?a="+shas[0]+"&amp;b="+shas[1]+"&amp;")
	assert.Equal(t, 2, strings.Count(page, ">What changed</a>"))

	// The comparison's page: October's 1, 1, 1 against November's 9, 1.
	res, page = p.do(t, http.MethodGet, strings.ReplaceAll(strings.ReplaceAll(link, "&amp;", "&"), "%3a", "%3A"), "", "Accept", "text/html")
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	for _, row := range []string{
		// The figures: before, after, change.
		`<th scope="row">Accounts</th><td class="num">3</td><td class="num">2</td><td class="num change down">−1</td>`,
		`<th scope="row">Total weight</th><td class="num">3</td><td class="num">10</td><td class="num change up">&#43;7</td>`,
		`<th scope="row">Top account&#39;s share</th><td class="num">33.3%</td><td class="num">90.0%</td><td class="num change up">&#43;56.7 pts</td>`,
		`<th scope="row">Fewest holding half</th><td class="num">2</td><td class="num">1</td><td class="num change down">−1</td>`,
		`<td class="num">0</td><td class="num">0.4</td><td class="num change up">&#43;0.4</td>`, // Gini
		// The third account left; the first rose from a third to 90%.
		`<h2 id="left-h">Left <span class="meta">1 account</span></h2>`,
		`<h2 id="entered-h">Entered <span class="meta">0 accounts</span></h2>`,
		`<td class="num weight">1</td><td class="num weight">9</td><td class="num">33.3%</td><td class="num">90.0%</td><td class="num change up">&#43;56.7 pts</td>`,
		`<a href="/map?id=` + escMap + `">← The map</a>`,
	} {
		assert.Contains(t, page, row)
	}
	// A bad, an unknown and a missing reading each get a page saying so.
	for _, c := range []struct {
		query, says string
		status      int
	}{
		{"a=" + shas[1] + "&b=nothex", "field /b must be 64 lower-case hex digits", http.StatusBadRequest},
		{"a=" + strings.Repeat("0", 64) + "&b=" + shas[2], "a: no snapshot", http.StatusNotFound},
		{"a=" + shas[1], "names no two readings", http.StatusBadRequest},
		{"a=" + shas[1] + "&b=" + shas[2] + "&offset=-1", "offset:", http.StatusBadRequest},
	} {
		res, page = p.do(t, http.MethodGet, "/compare?"+c.query, "", "Accept", "text/html")
		assert.Equal(t, c.status, res.StatusCode, c.query)
		assert.Contains(t, page, c.says, c.query)
	}

	res, _ = p.do(t, http.MethodGet, "/api/v1/maps/near:mainnet:nothing.near/history", "")
	assert.Equal(t, http.StatusNotFound, res.StatusCode)
}

// threeReadingsMap puts on the map three readings of the flowers DAO a
// month apart (September 6, 2, 2; October 1, 1, 1; November 9, 1), each a
// drawing published elsewhere out of order and brought in by the sync; it
// returns the map's id and the readings' sha256s, oldest first.
func threeReadingsMap(t *testing.T, p *testPetal, fake *nearrpctest.Server) (string, []string) {
	t.Helper()
	reading := func(month int, weights ...string) snapshots.Snapshot {
		s := flowerDAOSnapshot()
		s.Block = snapshots.Block{Height: uint64(month), Hash: fmt.Sprint("h", month), Time: fmt.Sprintf("2026-%02d-01T12:00:00Z", month)}
		s.Accounts = s.Accounts[:len(weights)]
		for i, w := range weights {
			s.Accounts[i].Weight = w
		}
		return s
	}
	var shas []string
	// September 6, 2, 2; October 1, 1, 1; November 9, 1.
	snaps := []snapshots.Snapshot{reading(9, "6", "2", "2"), reading(10, "1", "1", "1"), reading(11, "9", "1")}
	for _, s := range snaps {
		shas = append(shas, storeFlowerSnapshot(t, p, s))
	}
	mapID := published.MapOf(snapshots.Mainnet, json.RawMessage(`{"chain":"near:mainnet","dao":"flowers.sputnik-dao.near"}`))
	for _, i := range []int{2, 0, 1} { // published out of order
		spec, err := specs.Propose(&snaps[i], shas[i], "")
		require.NoError(t, err)
		f := published.Flower{Schema: published.Schema, Spec: spec, Snapshot: shas[i], About: "DAO members on NEAR", Map: mapID,
			MadeBy: "alice.near", MadeAt: fmt.Sprintf("2026-11-30T12:0%d:00Z", i)}
		id, record, err := f.Canonical()
		require.NoError(t, err)
		publishElsewhere(t, fake, "alice.near", id, record)
	}
	_, err := p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	return mapID, shas
}
