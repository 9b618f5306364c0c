package invites

import (
	"crypto/rand"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/people"
)

func TestMint(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	token, inv, err := Mint(rand.Reader, 50_000, DefaultDays, now)
	require.NoError(t, err)
	assert.True(t, strings.HasPrefix(token, TokenPrefix))
	assert.Regexp(t, `^inv_[0-9a-f]{32}$`, inv.ID)
	assert.Equal(t, people.HashToken(token), inv.TokenHash)
	assert.Equal(t, HashToken(" "+token+"\n"), inv.TokenHash, "pasted whitespace doesn't matter")
	assert.Equal(t, now.Add(14*24*time.Hour), inv.ExpiresAt)

	for _, bad := range []struct {
		budget int64
		days   int
	}{{0, 14}, {-1, 14}, {1, 0}, {1, 3651}} {
		_, _, err := Mint(rand.Reader, credit.Micros(bad.budget), bad.days, now)
		assert.Error(t, err, "%+v", bad)
	}
}

func TestStatusAt(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	inv := Invite{Budget: 100, ExpiresAt: now.Add(time.Hour)}
	assert.Equal(t, Active, inv.StatusAt(now))
	held := inv
	held.Held = 100
	assert.Equal(t, Active, held.StatusAt(now), "calls in flight don't spend it yet")
	spent := inv
	spent.Spent = 100
	assert.Equal(t, Spent, spent.StatusAt(now))
	assert.Equal(t, Expired, inv.StatusAt(now.Add(time.Hour)))
	revoked := spent
	revoked.RevokedAt = &now
	assert.Equal(t, Revoked, revoked.StatusAt(now), "revoked wins over spent")

	v := Invite{Budget: 100, Spent: 130, ExpiresAt: now.Add(time.Hour)}.ViewAt(now)
	assert.Equal(t, Spent, v.Status)
	b, _ := v.LeftUSD.MarshalJSON()
	assert.Equal(t, "0", string(b), "left never shows below zero")
}
