package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/snapshots"
)

// A Sputnik proposal closes its policy's proposal_period after submission:
// the reader reads get_policy at the proposals' block, keeps the period in
// the reading, and the map's proposals answer closes_at from it (issue 33).
func TestSputnikProposalsCloseTheirPolicysPeriodAfterSubmission(t *testing.T) {
	t.Parallel()
	fake := nearrpctest.New(t)
	// The map's SocialDB is read on both networks.
	p := startPetal(t, map[string]string{"PETAL_NEAR_RPC_MAINNET": fake.URL, "PETAL_NEAR_RPC_TESTNET": fake.URL, "PETAL_NEAR_PAGE_SIZE": "2"})
	calledBefore := len(fake.Calls())
	status, out := p.getSnapshot(t, `{"network":"near-dao-proposals","params":{"dao":"marketing.sputnik-dao.near"},"fresh":true}`)
	require.Equal(t, http.StatusOK, status, out)
	sha := out["sha256"].(string)

	// get_policy is asked at the very block the proposals were read at.
	blocks := map[string]string{}
	for _, c := range fake.Calls()[calledBefore:] {
		if c.Contract == "marketing.sputnik-dao.near" && (c.Function == "get_proposals" || c.Function == "get_policy") {
			require.NotEmpty(t, c.BlockID, "%s asked at a finality, not the reading's block", c.Function)
			blocks[c.Function] = c.BlockID
		}
	}
	require.Contains(t, blocks, "get_policy")
	assert.Equal(t, blocks["get_proposals"], blocks["get_policy"])

	snap := p.body(t, sha)
	assert.Equal(t, "604800000000000", snap["detail"].(map[string]any)["proposal_period"], "the recorded policy's 7 days, in nanoseconds")

	raw, err := json.Marshal(snap)
	require.NoError(t, err)
	var reading snapshots.Snapshot
	require.NoError(t, json.Unmarshal(raw, &reading))
	record, id := flowerOfReading(t, reading, sha, "alice.near")
	publishElsewhere(t, fake, "alice.near", id, record)
	kept, err := p.Svc.MapSync.Run(t.Context())
	require.NoError(t, err)
	require.EqualValues(t, 1, kept)

	res, body := p.do(t, http.MethodGet, "/api/v1/maps/"+url.PathEscape(marketingMap)+"/proposals", "")
	require.Equal(t, http.StatusOK, res.StatusCode, body)
	var got struct {
		Proposals struct {
			Proposals []struct {
				ID       string  `json:"id"`
				At       *string `json:"at"`
				ClosesAt *string `json:"closes_at"`
			} `json:"proposals"`
		} `json:"proposals"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &got), body)
	// submission_time in the recordings: 1790000000, 1790500000, 1791000000,
	// 1792000000 and 1793000000 seconds; each closes 604,800 s later.
	want := map[string][2]string{
		"0": {"2026-09-21T14:13:20Z", "2026-09-28T14:13:20Z"},
		"1": {"2026-09-27T09:06:40Z", "2026-10-04T09:06:40Z"},
		"2": {"2026-10-03T04:00:00Z", "2026-10-10T04:00:00Z"},
		"3": {"2026-10-14T17:46:40Z", "2026-10-21T17:46:40Z"},
		"4": {"2026-10-26T07:33:20Z", "2026-11-02T07:33:20Z"},
	}
	require.Len(t, got.Proposals.Proposals, len(want), body)
	for _, pr := range got.Proposals.Proposals {
		require.NotNil(t, pr.At, "proposal %s", pr.ID)
		require.NotNil(t, pr.ClosesAt, "proposal %s has no closes_at", pr.ID)
		assert.Equal(t, want[pr.ID], [2]string{*pr.At, *pr.ClosesAt}, "proposal %s", pr.ID)
	}
}
