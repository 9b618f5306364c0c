package httpapi

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/domain/errs"
)

// Every error code the door answers has a meaning in the skill, and the
// skill names it with its status: a new code without one stops the server
// at start-up, and this says which.
func TestEveryRefusalIsExplainedInTheSkill(t *testing.T) {
	statuses := map[errs.Code]int{}
	for code, status := range statusOf {
		_, ok := siteapp.RefusalMeaning(code)
		assert.True(t, ok, "the skill says nothing about %s", code)
		statuses[code] = status
	}
	skill, err := siteapp.RenderSkill(config.Config{}, nil, siteapp.SkillDoor{Statuses: statuses})
	require.NoError(t, err)
	for code, status := range statusOf {
		assert.Contains(t, string(skill.Body), "- `"+string(code)+"` ("+strconv.Itoa(status)+"): ")
	}
	assert.True(t, strings.HasPrefix(skill.ETag, `"`) && strings.HasSuffix(skill.ETag, `"`), skill.ETag)
}
