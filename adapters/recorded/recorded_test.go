package recorded_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/recorded"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/domain/runs"
	"github.com/petal-near/petal/ports"
)

// The transcript's steps follow the thread, and "$tool.field" arguments take
// what the tools really answered.
func TestTheTranscriptChainsOnWhatToolsAnswered(t *testing.T) {
	p := recorded.New(0)
	assert.Equal(t, runs.RecordedModel, p.Name())
	tools := []ports.ModelTool{}
	thread := []runs.Message{{Role: runs.RoleUser, Content: "draw something"}}
	ask := func() ports.ModelAnswer {
		ans, err := p.Complete(t.Context(), ports.ModelRequest{Messages: thread, Tools: tools})
		require.NoError(t, err)
		return ans
	}
	first := ask()
	require.Len(t, first.Message.ToolCalls, 1)
	assert.Equal(t, "get_snapshot", first.Message.ToolCalls[0].Name)
	thread = append(thread, first.Message, runs.Message{Role: runs.RoleTool, Name: "get_snapshot", ToolCallID: first.Message.ToolCalls[0].ID,
		Content: `{"sha256":"abc123","count":7}`})
	second := ask()
	require.Len(t, second.Message.ToolCalls, 1)
	assert.Equal(t, "propose_spec", second.Message.ToolCalls[0].Name)
	var args map[string]any
	require.NoError(t, json.Unmarshal(second.Message.ToolCalls[0].Args, &args))
	assert.Equal(t, "abc123", args["sha256"])
	assert.Zero(t, p.WorstCase(ports.ModelRequest{}), "a recorded answer costs nothing")

	// A later message gets the plain follow-up, with no tools.
	thread = append(thread, runs.Message{Role: runs.RoleUser, Content: "and now?"})
	later := ask()
	assert.Empty(t, later.Message.ToolCalls)
	assert.Contains(t, later.Message.Content, "NEAR_AI_API_KEY")
	sig, err := p.Sign(t.Context(), later)
	require.NoError(t, err)
	assert.Equal(t, "recorded", sig.SignatureKind)
}

// The recorded chat draws the demo reading by its name (the demo is never a
// target's stored reading), so the name in the transcript is the shipped one.
func TestTheTranscriptReadsTheShippedDemoByName(t *testing.T) {
	first, err := recorded.New(0).Complete(t.Context(), ports.ModelRequest{
		Messages: []runs.Message{{Role: runs.RoleUser, Content: "draw something"}}, Tools: []ports.ModelTool{}})
	require.NoError(t, err)
	var args map[string]any
	require.NoError(t, json.Unmarshal(first.Message.ToolCalls[0].Args, &args))
	shipped := snapshotsapp.ShippedSnapshots()
	require.NotEmpty(t, shipped)
	assert.Equal(t, shipped[0].SHA256, args["at"], "regenerated shipped snapshot: update the transcript's at")
}
