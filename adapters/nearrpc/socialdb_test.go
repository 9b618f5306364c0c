package nearrpc

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

func newSocialClient(t *testing.T) (*Client, *nearrpctest.Server) {
	fake := nearrpctest.New(t)
	return New(Options{URLs: map[string]string{"near:testnet": fake.URL, "near:mainnet": fake.URL}, Attempts: 2, Backoff: time.Millisecond}), fake
}

func TestSocialDBGetAndKeys(t *testing.T) {
	c, fake := newSocialClient(t)
	ctx := t.Context()
	id1, id2 := strings.Repeat("a", 64), strings.Repeat("b", 64)
	b1, err := fake.SocialSet("v1.social08.testnet", "alice.testnet",
		[]byte(`{"data":{"alice.testnet":{"petal":{"flower":{"`+id1+`":"{\"schema\":\"flower/v1\"}"}},"profile":{"name":"Alice"}}}}`))
	require.NoError(t, err)
	b2, err := fake.SocialSet("v1.social08.testnet", "bob.testnet", []byte(`{"data":{"bob.testnet":{"petal":{"flower":{"`+id2+`":"two"}}}}}`))
	require.NoError(t, err)
	_, err = fake.SocialSet("v1.social08.testnet", "mallory.testnet", []byte(`{"data":{"bob.testnet":{"petal":{"flower":{"x":"forged"}}}}}`))
	require.Error(t, err, "the contract lets no one write under another account")

	got, err := c.Get(ctx, "near:testnet", []string{"alice.testnet/petal/flower/" + id1}, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, []ports.SocialValue{{Path: "alice.testnet/petal/flower/" + id1, Value: `{"schema":"flower/v1"}`}}, got)

	got, err = c.Get(ctx, "near:testnet", []string{"bob.testnet/petal/flower/" + id1}, 1<<20)
	require.NoError(t, err)
	assert.Empty(t, got, "nothing under that key")

	keys, err := c.Keys(ctx, "near:testnet", []string{"*/petal/flower/*"}, 1<<20)
	require.NoError(t, err)
	assert.Equal(t, []ports.SocialKey{{Path: "alice.testnet/petal/flower/" + id1, BlockHeight: b1}, {Path: "bob.testnet/petal/flower/" + id2, BlockHeight: b2}}, keys)

	accounts, err := c.Accounts(ctx, "near:testnet", 0, 1)
	require.NoError(t, err)
	assert.Equal(t, []string{"alice.testnet"}, accounts)
	accounts, err = c.Accounts(ctx, "near:testnet", 1, 10)
	require.NoError(t, err)
	assert.Equal(t, []string{"bob.testnet"}, accounts)

	// Deleting a value: get no longer finds it.
	_, err = fake.SocialSet("v1.social08.testnet", "bob.testnet", []byte(`{"data":{"bob.testnet":{"petal":{"flower":{"`+id2+`":null}}}}}`))
	require.NoError(t, err)
	got, err = c.Get(ctx, "near:testnet", []string{"bob.testnet/petal/flower/*"}, 1<<20)
	require.NoError(t, err)
	assert.Empty(t, got)

	// Mainnet's SocialDB is another contract, with nothing in it.
	got, err = c.Get(ctx, "near:mainnet", []string{"alice.testnet/petal/flower/" + id1}, 1<<20)
	require.NoError(t, err)
	assert.Empty(t, got)
	assert.Equal(t, "social.near", fake.Calls()[len(fake.Calls())-1].Contract)
}

func TestSocialDBBoundsWhatItReads(t *testing.T) {
	c, fake := newSocialClient(t)
	_, err := fake.SocialSet("v1.social08.testnet", "alice.testnet",
		[]byte(`{"data":{"alice.testnet":{"petal":{"flower":{"big":"`+strings.Repeat("x", 10_000)+`"}}}}}`))
	require.NoError(t, err)
	_, err = c.Get(t.Context(), "near:testnet", []string{"alice.testnet/petal/flower/*"}, 1000)
	assert.True(t, errs.Is(err, errs.CannotRead), "%v", err)
	_, err = c.Get(t.Context(), "near:testnet", []string{"alice.testnet/petal/flower/*"}, 20_000)
	assert.NoError(t, err)
}

func TestSocialDBChainDown(t *testing.T) {
	c, fake := newSocialClient(t)
	fake.Inject(nearrpctest.Fault{Contract: "v1.social08.testnet", Status: http.StatusServiceUnavailable})
	_, err := c.Get(t.Context(), "near:testnet", []string{"alice.testnet/petal/flower/*"}, 1<<20)
	assert.True(t, errs.Is(err, errs.SourceFailed), "%v", err)
	_, err = c.Get(t.Context(), "near:sidechain", []string{"alice.testnet/petal/flower/*"}, 1<<20)
	assert.True(t, errs.Is(err, errs.BadInput), "%v", err)
}

func TestWalkTreeRefusesStrangeShapes(t *testing.T) {
	for _, bad := range []string{`[]`, `{"a":[1]}`, `{"a":{"b":1}} {}`, `"x"`, `{"a":` + strings.Repeat(`{"a":`, 40) + `"x"` + strings.Repeat("}", 41)} {
		err := walkTree([]byte(bad), func(string, json.RawMessage) error { return nil })
		assert.Error(t, err, bad)
	}
	var paths []string
	require.NoError(t, walkTree([]byte(`{"a":{"":"own","b":"leaf"}}`), func(p string, _ json.RawMessage) error { paths = append(paths, p); return nil }))
	assert.Equal(t, []string{"a", "a/b"}, paths)
}
