package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/published"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/domain/specs"
)

// voting_blocs on a hand-built proposals reading, through HTTP and MCP alike.
func TestVotingBlocsThroughEveryDoor(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL})
	sha, s := proposalsReading(t, p)

	res, body := p.do(t, http.MethodPost, "/api/v1/figures/voting-blocs", `{"sha256":"`+sha+`","limit":2}`)
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var got map[string]any
	require.NoError(t, json.Unmarshal([]byte(body), &got))
	// alice–bob alike on all 3; alice–carol and bob–carol only on the second: 1/3.
	assert.JSONEq(t, `{"total":3,"items":[
		{"a":"near:mainnet:alice.near","b":"near:mainnet:bob.near","common":3,"agreed":3,"agreement":1},
		{"a":"near:mainnet:alice.near","b":"near:mainnet:carol.near","common":3,"agreed":1,"agreement":0.333333}]}`, mustJSON(t, got["pairs"]))
	assert.JSONEq(t, `[{"accounts":["near:mainnet:alice.near","near:mainnet:bob.near"],"size":2}]`, mustJSON(t, got["blocs"]))

	cs, err := sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, nil).
		Connect(t.Context(), &sdk.StreamableClientTransport{Endpoint: p.URL + "/mcp", DisableStandaloneSSE: true}, nil)
	require.NoError(t, err)
	defer cs.Close()
	out, err := cs.CallTool(t.Context(), &sdk.CallToolParams{Name: "voting_blocs", Arguments: map[string]any{"sha256": sha, "limit": 2}})
	require.NoError(t, err)
	require.False(t, out.IsError, "%+v", out.Content)
	var viaMCP map[string]any
	require.NoError(t, json.Unmarshal([]byte(mustJSON(t, out.StructuredContent)), &viaMCP))
	delete(got, "tools_version")
	delete(viaMCP, "tools_version")
	assert.Equal(t, got, viaMCP)

	// Published on its DAO's map, its blocs are listed beside it on the map's page.
	mapID := publishProposals(t, p, fake, sha, s)
	res, page := p.do(t, http.MethodGet, "/map?id="+url.QueryEscape(mapID), "", "Accept", "text/html")
	require.Equal(t, http.StatusOK, res.StatusCode, page)
	for _, text := range []string{
		`<h3 id="blocs-h">Who votes with whom</h3>`,
		`3 voters on 3 proposals; pairs that voted on at least 3 together`,
		`<a href="/account?id=near%3amainnet%3aalice.near" title="near:mainnet:alice.near">alice.near</a> and <a href="/account?id=near%3amainnet%3abob.near" title="near:mainnet:bob.near">bob.near</a>: alike on 3 of 3 (100.0%)`,
		`carol.near</a>: alike on 1 of 3 (33.3%)`,
		`voting alike at least 80.0% of the time`,
		`<li><a href="/account?id=near%3amainnet%3aalice.near" title="near:mainnet:alice.near">alice.near</a>, <a href="/account?id=near%3amainnet%3abob.near" title="near:mainnet:bob.near">bob.near</a></li>`,
	} {
		assert.Contains(t, page, text)
	}
	assert.Equal(t, 1, strings.Count(page, `class="reading-beside"`))

	members := storeFlowerSnapshot(t, p, flowerDAOSnapshot())
	res, body = p.do(t, http.MethodPost, "/api/v1/figures/voting-blocs", `{"sha256":"`+members+`"}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
	res, body = p.do(t, http.MethodPost, "/api/v1/figures/voting-blocs", `{"sha256":"`+sha+`","min_agreement":2}`)
	assert.Equal(t, http.StatusBadRequest, res.StatusCode, body)
}

// proposalsReading stores a hand-built proposals reading of the flowers DAO:
// alice and bob vote alike on all three proposals, carol with them once.
func proposalsReading(t *testing.T, p *testPetal) (string, snapshots.Snapshot) {
	t.Helper()
	votes := []map[string]string{
		{"alice.near": "Approve", "bob.near": "Approve", "carol.near": "Reject"},
		{"alice.near": "Approve", "bob.near": "Approve", "carol.near": "Approve"},
		{"alice.near": "Reject", "bob.near": "Reject", "carol.near": "Approve"},
	}
	var ps []snapshots.Proposal
	for i, v := range votes {
		ps = append(ps, snapshots.Proposal{ID: uint64(i), Proposer: "alice.near", Description: "p", Kind: json.RawMessage(`"Vote"`), Status: "Approved",
			SubmissionTime: "1700000000000000000", Votes: v})
	}
	tally, err := snapshots.TallyVotes(snapshots.Mainnet, snapshots.Proposals{List: ps, Last: 3})
	require.NoError(t, err)
	s := flowerDAOSnapshot()
	s.Network, s.Title = snapshots.ProposalsNetwork, "Votes in flowers.sputnik-dao.near"
	s.Groups, s.Accounts, s.Detail = tally.Groups, tally.Accounts, tally.Detail
	sha := storeFlowerSnapshot(t, p, s)
	return sha, s
}

// publishProposals puts a drawing of the proposals reading on its DAO's map
// (published elsewhere, brought in by the sync) and returns the map's id.
func publishProposals(t *testing.T, p *testPetal, fake *nearrpctest.Server, sha string, s snapshots.Snapshot) string {
	t.Helper()
	mapID := published.MapOf(snapshots.Mainnet, s.Params)
	spec, err := specs.Propose(&s, sha, "")
	require.NoError(t, err)
	f := published.Flower{Schema: published.Schema, Spec: spec, Snapshot: sha, About: "votes in a DAO", Map: mapID, MadeBy: "alice.near", MadeAt: "2026-11-30T12:00:00Z"}
	id, record, err := f.Canonical()
	require.NoError(t, err)
	publishElsewhere(t, fake, "alice.near", id, record)
	_, err = p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	return mapID
}
