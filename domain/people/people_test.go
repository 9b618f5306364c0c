package people

import (
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTokenIsOpaque256BitsAndOnlyItsHashIsKept(t *testing.T) {
	token, hash, err := NewToken(rand.Reader)
	require.NoError(t, err)
	raw, err := base64.RawURLEncoding.DecodeString(token)
	require.NoError(t, err)
	assert.Len(t, raw, 32)
	sum := sha256.Sum256([]byte(token))
	assert.Equal(t, hex.EncodeToString(sum[:]), hash)
	assert.True(t, ValidSessionID(hash))
	assert.NotContains(t, hash, token)

	other, _, err := NewToken(rand.Reader)
	require.NoError(t, err)
	assert.NotEqual(t, token, other)
}

func TestTokenFailsWithoutRandomness(t *testing.T) {
	_, _, err := NewToken(bytes.NewReader(make([]byte, 5)))
	assert.Error(t, err)
}

func TestSubjects(t *testing.T) {
	p, err := NewPersonID(rand.Reader)
	require.NoError(t, err)
	a, err := NewAnonymousHandle(rand.Reader)
	require.NoError(t, err)
	assert.True(t, IsPerson(p))
	assert.False(t, IsPerson(a))
	assert.True(t, ValidSubject(a))
	for _, bad := range []string{"", "prs_", "prs_XYZ", "usr_0123456789abcdef0123456789abcdef", "anon_0123456789abcdef0123456789abcdeF", p + "0"} {
		assert.False(t, ValidSubject(bad), bad)
	}
}

func TestSessionLastsThirtyDays(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	subject, _ := NewAnonymousHandle(rand.Reader)
	token, s, err := NewSession(rand.Reader, subject, now)
	require.NoError(t, err)
	assert.Equal(t, HashToken(token), s.ID)
	assert.Equal(t, now.Add(30*24*time.Hour), s.ExpiresAt)
	assert.False(t, s.Expired(now.Add(30*24*time.Hour-time.Second)))
	assert.True(t, s.Expired(now.Add(30*24*time.Hour)))
	assert.False(t, s.Signed())

	_, _, err = NewSession(rand.Reader, "nobody", now)
	assert.Error(t, err)
}

func TestReplacementKeepsTheInvite(t *testing.T) {
	now := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	anon, _ := NewAnonymousHandle(rand.Reader)
	_, old, err := NewSession(rand.Reader, anon, now)
	require.NoError(t, err)
	old.InviteID = "inv_0123456789abcdef0123456789abcdef"
	person, _ := NewPersonID(rand.Reader)
	token, s, err := Replacement(rand.Reader, old, person, "wal_1", now.Add(time.Hour))
	require.NoError(t, err)
	assert.NotEqual(t, old.ID, s.ID)
	assert.Equal(t, HashToken(token), s.ID)
	assert.Equal(t, old.InviteID, s.InviteID)
	assert.Equal(t, "wal_1", s.WalletID)
	assert.True(t, s.Signed())
	assert.Equal(t, now.Add(time.Hour+SessionLifetime), s.ExpiresAt)
}
