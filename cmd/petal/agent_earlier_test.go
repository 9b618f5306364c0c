package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearai/nearaitest"
	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/snapshotsapp"
)

// When the agent reads a target whose map has an earlier reading, the tool
// result the model reads says so (earlier_reading, with the compare_figures
// call that tells what changed), so it can say "since the last reading, …".
func TestAgentToldOfTheMapsEarlierReading(t *testing.T) {
	t.Parallel()
	const model = "deepseek-ai/DeepSeek-V3.1"
	read := nearaitest.Call{Name: "get_snapshot", Args: `{"network":"near-dao-members","params":{"chain":"near:mainnet","dao":"marketing.sputnik-dao.near"}}`}
	fake := nearaitest.New(t,
		nearaitest.Completion("a1", model, "", read),
		nearaitest.Completion("a2", model, "Since the last reading, nothing moved."),
	)
	rpc := nearrpctest.New(t)
	env := modelEnv(fake)
	env["PETAL_NEAR_RPC_MAINNET"], env["PETAL_NEAR_RPC_TESTNET"] = rpc.URL, rpc.URL
	p := startPetal(t, env)
	mapID, earlier := drawEarlier(t, p, rpc, "near-dao-members", `{"dao":"marketing.sputnik-dao.near"}`, 24*time.Hour, 1)
	now, err := p.Svc.Snapshots.Read(t.Context(), "near-dao-members", json.RawMessage(`{"dao":"marketing.sputnik-dao.near"}`), nil)
	require.NoError(t, err)
	current, _, err := snapshotsapp.StoreSnapshot(t.Context(), postgres.NewSnapshotRepository(p.DB.DB), now, snapshotsapp.OriginThisSite)
	require.NoError(t, err)

	evs := p.openSSE(t, http.MethodPost, "/api/v1/agent/chat", `{"messages":[{"role":"user","content":"how is the Marketing DAO's council now?"}]}`).rest(t)
	assert.Equal(t, "done", evs[len(evs)-1].Name, "%v", kindsOf(evs))
	reqs := fake.Completions()
	require.Len(t, reqs, 2)
	msgs := reqs[1].Body["messages"].([]any)
	last := msgs[len(msgs)-1].(map[string]any)
	require.Equal(t, "tool", last["role"])
	content := last["content"].(string)
	var got struct {
		SHA256  string `json:"sha256"`
		Earlier struct {
			Map      string `json:"map"`
			Snapshot string `json:"snapshot"`
			Note     string `json:"note"`
		} `json:"earlier_reading"`
	}
	require.NoError(t, json.Unmarshal([]byte(content), &got), content)
	assert.Equal(t, current, got.SHA256, "the stored reading was read")
	assert.Equal(t, mapID, got.Earlier.Map)
	assert.Equal(t, earlier, got.Earlier.Snapshot)
	assert.True(t, strings.Contains(got.Earlier.Note, `compare_figures {"a":"`+earlier+`","b":"`+current+`"}`), got.Earlier.Note)
}
