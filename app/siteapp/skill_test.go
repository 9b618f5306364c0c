package siteapp_test

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

func skillOf(t *testing.T, door siteapp.SkillDoor) (siteapp.Skill, *toolkit.Registry, error) {
	t.Helper()
	cfg, err := config.LoadConfig(func(string) string { return "" })
	require.NoError(t, err)
	reg := toolkit.NewRegistry(cfg, nil, []toolkit.ToolSet{&flowersapp.FlowerService{}})
	s, err := siteapp.RenderSkill(cfg, reg, door)
	return s, reg, err
}

// The skill lists every tool outside the agent's own, with its route, and
// every refusal the door answers with its meaning; its ETag is its bytes'
// hash, the same for the same site.
func TestTheSkillListsEveryToolAndRefusal(t *testing.T) {
	door := siteapp.SkillDoor{
		Routes:    map[string]string{flowersapp.ToolRenderFlower: "POST /api/v1/render"},
		Statuses:  map[errs.Code]int{errs.BadInput: http.StatusBadRequest, errs.RateLimited: http.StatusTooManyRequests},
		BodyLimit: 1 << 20, ChatBodyLimit: 64 << 10, PostedWireLimit: 2 << 20, PostedInflatedLimit: 32 << 20,
	}
	s, reg, err := skillOf(t, door)
	require.NoError(t, err)
	body := string(s.Body)
	for _, tool := range reg.All() {
		if tool.AgentOnly {
			continue // the agent's own: no route, not in the skill
		}
		assert.Contains(t, body, tool.Name)
	}
	assert.Contains(t, body, "POST /api/v1/render")
	// How an agent tells a map's story over time, beyond the tools' list.
	for _, how := range []string{"/history` lists", "`compare_figures` with `{ \"a\": previous, \"b\": snapshot }`", "since the last reading",
		"`earlier_reading`", "/compare?a=", "`voting_blocs` with its `sha256`", "`prepare_correction` with", "`submit_correction` with"} {
		assert.Contains(t, body, how)
	}
	for code := range door.Statuses {
		meaning, ok := siteapp.RefusalMeaning(code)
		require.True(t, ok, "%s has a meaning", code)
		assert.Contains(t, body, string(code))
		assert.Contains(t, body, meaning[:strings.IndexByte(meaning, ' ')+1])
	}
	sum := sha256.Sum256(s.Body)
	assert.Equal(t, `"`+hex.EncodeToString(sum[:16])+`"`, s.ETag)

	again, _, err := skillOf(t, door)
	require.NoError(t, err)
	assert.Equal(t, s.ETag, again.ETag, "the same site renders the same skill")
}

// A door answering a code the skill has no meaning for is refused at start,
// not shown to agents as a blank.
func TestASkillWithoutAMeaningForACodeIsRefused(t *testing.T) {
	_, _, err := skillOf(t, siteapp.SkillDoor{Statuses: map[errs.Code]int{"no_such_code": 418}})
	require.ErrorContains(t, err, "no_such_code")
}
