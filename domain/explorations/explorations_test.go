package explorations

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAccess(t *testing.T) {
	owned := Exploration{ID: "exp_1", Owner: "anon_a"}
	unowned := Exploration{ID: "exp_2"}
	revoked := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	cases := []struct {
		name string
		got  Access
		want Access
	}{
		{"the owner by id", AccessByID(owned, "anon_a"), OwnerAccess},
		{"a stranger by id", AccessByID(owned, "anon_b"), NoAccess},
		{"no session by id", AccessByID(owned, ""), NoAccess},
		{"anyone by an unowned one's id", AccessByID(unowned, ""), ContinueAccess},
		{"a read link", AccessByLink(Link{Scope: ScopeRead}), ReadAccess},
		{"a continue link", AccessByLink(Link{Scope: ScopeContinue}), ContinueAccess},
		{"a revoked link", AccessByLink(Link{Scope: ScopeContinue, RevokedAt: &revoked}), NoAccess},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, tc.got) })
	}
}

func TestLinkTokenIs32RandomBytesAndOnlyItsHashIsKept(t *testing.T) {
	token, hash, err := NewLinkToken(bytes.NewReader(bytes.Repeat([]byte{7}, 32)))
	require.NoError(t, err)
	assert.True(t, ValidToken(token))
	assert.Len(t, token, 43)
	assert.Equal(t, HashToken(token), hash)
	assert.NotContains(t, hash, token)
	_, _, err = NewLinkToken(bytes.NewReader(nil))
	assert.Error(t, err, "no randomness, no token")
}

func TestChecks(t *testing.T) {
	assert.Error(t, CheckQuestion("  ", ""))
	assert.Error(t, CheckQuestion(strings.Repeat("q", MaxQuestion+1), ""))
	assert.NoError(t, CheckQuestion("who holds power in this DAO?", ""))
	assert.Error(t, CheckIdempotencyKey(strings.Repeat("k", 201)))
	assert.NoError(t, CheckIdempotencyKey(strings.Repeat("k", 200)))
	assert.Error(t, CheckIdempotencyKey("a b"))
	_, err := ParseScope("write")
	assert.Error(t, err)
	n, err := ListLimit(0)
	require.NoError(t, err)
	assert.Equal(t, DefaultListLimit, n)
	_, err = ListLimit(MaxListLimit + 1)
	assert.Error(t, err)
}

func TestResumePacketSaysWhatTheLinkAllows(t *testing.T) {
	e := Exploration{ID: "exp_1", Question: "Who votes?\n# not a heading", CreatedAt: time.Unix(0, 0), UpdatedAt: time.Unix(0, 0)}
	steps := []Step{{Seq: 1, SpecSHA256: strings.Repeat("a", 64), Note: "first"}}
	read := ResumePacket(e, steps, nil, ReadAccess, "https://petal.example", "TOKEN")
	assert.Contains(t, read, "# Who votes? # not a heading\n")
	assert.Contains(t, read, "1. spec `"+strings.Repeat("a", 64)+"`")
	assert.Contains(t, read, "GET https://petal.example/api/v1/explorations/TOKEN")
	assert.NotContains(t, read, "/steps")
	cont := ResumePacket(e, steps, []Note{{Text: "a note"}}, ContinueAccess, "https://petal.example", "TOKEN")
	assert.Contains(t, cont, "POST https://petal.example/api/v1/explorations/TOKEN/steps")
	assert.Contains(t, cont, "- a note")
}
