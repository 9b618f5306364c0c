package nearrpc

import (
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/nearrpc/nearrpctest"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// pagedClient asks for pages of two, so every paged read of the recordings
// (five proposals, five delegators) takes several pages.
func pagedClient(t *testing.T) (*Client, *nearrpctest.Server) {
	fake := nearrpctest.New(t)
	return New(Options{URLs: map[string]string{snapshots.Mainnet: fake.URL}, CallTimeout: 30 * time.Second, Backoff: time.Millisecond, PageSize: 2}), fake
}

// pages records what a Paging hears.
type pages [][2]int

func (p *pages) hear(read, total int) { *p = append(*p, [2]int{read, total}) }

func TestPinReadsAtTheFinalBlockAndKeepsTheCalls(t *testing.T) {
	c, _ := pagedClient(t)
	r, err := c.Pin(t.Context(), snapshots.Mainnet)
	require.NoError(t, err)
	assert.Equal(t, snapshots.Block{Height: nearrpctest.RecordedHeight, Hash: nearrpctest.RecordedHash, Time: nearrpctest.RecordedTime}, r.Block())

	profile, err := r.DAOProfile(t.Context(), "marketing.sputnik-dao.near")
	require.NoError(t, err)
	assert.Contains(t, profile.Purpose, "Marketing guild")
	roles, err := r.DAORoles(t.Context(), "marketing.sputnik-dao.near")
	require.NoError(t, err)
	// "all" (Everyone) names no accounts and is not a role that lists members.
	assert.Equal(t, []snapshots.DAORole{
		{Name: "council", Members: []string{"alice.near", "bob.near", "carol.near"}},
		{Name: "community", Members: []string{"carol.near", "dave.near", "erin.near", "frank.near"}},
	}, roles)

	var heard pages
	props, err := r.DAOProposals(t.Context(), "marketing.sputnik-dao.near", 20_000, heard.hear)
	require.NoError(t, err)
	assert.EqualValues(t, 5, props.Last)
	require.Len(t, props.List, 5)
	assert.Equal(t, pages{{0, 5}, {2, 5}, {4, 5}, {5, 5}}, heard)
	assert.Equal(t, "604800000000000", props.ProposalPeriod, "the policy's proposal_period, read after the proposals")

	assert.Equal(t, []snapshots.Call{
		{Contract: "marketing.sputnik-dao.near", Method: "get_config"},
		// Once for the roles, once for the proposals' period.
		{Contract: "marketing.sputnik-dao.near", Method: "get_policy", Pages: 2},
		{Contract: "marketing.sputnik-dao.near", Method: "get_last_proposal_id"},
		{Contract: "marketing.sputnik-dao.near", Method: "get_proposals", Pages: 3},
	}, r.Source().Calls)
}

func TestDAOProposalsPastTheBoundReadsTheNewest(t *testing.T) {
	c, fake := pagedClient(t)
	r, err := c.Pin(t.Context(), snapshots.Mainnet)
	require.NoError(t, err)
	var heard pages
	props, err := r.DAOProposals(t.Context(), "marketing.sputnik-dao.near", 1, heard.hear)
	require.NoError(t, err)
	// The newest one is id 4, on the page from 4.
	require.NotEmpty(t, props.List)
	assert.EqualValues(t, 4, props.List[0].ID)
	assert.Equal(t, pages{{0, 1}, {1, 1}}, heard)
	assert.Equal(t, 1, fake.CountCalls("get_proposals"))
}

func TestDelegatorsPageThroughThePool(t *testing.T) {
	c, fake := pagedClient(t)
	r, err := c.Pin(t.Context(), snapshots.Mainnet)
	require.NoError(t, err)
	var heard pages
	ds, err := r.Delegators(t.Context(), "astro-stakers.poolv1.near", 1_000_000, heard.hear)
	require.NoError(t, err)
	require.NotEmpty(t, ds)
	assert.Equal(t, snapshots.Delegation{Account: "whale.near", StakedYocto: "1200000000000000000000000000", UnstakedYocto: "0", CanWithdraw: true}, ds[0])
	assert.Equal(t, 3, fake.CountCalls("get_accounts"))
	assert.Equal(t, [2]int{0, 5}, heard[0])
	assert.Equal(t, [2]int{5, 5}, heard[len(heard)-1])
}

func TestTokenAndBalances(t *testing.T) {
	c, fake := pagedClient(t)
	r, err := c.Pin(t.Context(), snapshots.Mainnet)
	require.NoError(t, err)
	token, err := r.Token(t.Context(), "usdt.tether-token.near")
	require.NoError(t, err)
	assert.Equal(t, "USDt", token.Symbol)
	accounts := []string{"alice.near", "bob.near", "carol.near", "dave.near", "erin.near", "frank.near", "whale.near"}
	var heard pages
	amounts, err := r.Balances(t.Context(), "usdt.tether-token.near", accounts, heard.hear)
	require.NoError(t, err)
	require.Len(t, amounts, len(accounts))
	for i, a := range amounts {
		_, err := snapshots.ShiftDecimal(a, 0)
		assert.NoError(t, err, "%s's balance %q", accounts[i], a)
	}
	assert.Equal(t, 7, fake.CountCalls("ft_balance_of"))
	require.Len(t, heard, 8, "once before, then once per balance")
	assert.Equal(t, [2]int{0, 7}, heard[0])
	assert.Equal(t, [2]int{7, 7}, heard[7])
	calls := r.Source().Calls
	assert.Equal(t, snapshots.Call{Contract: "usdt.tether-token.near", Method: "ft_balance_of", Pages: 7}, calls[len(calls)-1],
		"many calls keep no arguments (which came first is chance)")
}

func TestBalancesStopAtTheFirstFailure(t *testing.T) {
	c, fake := pagedClient(t)
	fake.Inject(nearrpctest.Fault{Function: "ft_balance_of", Contract: "usdt.tether-token.near", Status: http.StatusBadRequest})
	r, err := c.Pin(t.Context(), snapshots.Mainnet)
	require.NoError(t, err)
	accounts := make([]string, 200)
	for i := range accounts {
		accounts[i] = "alice.near"
	}
	_, err = r.Balances(t.Context(), "usdt.tether-token.near", accounts, func(int, int) {})
	require.Error(t, err)
	assert.Less(t, fake.CountCalls("ft_balance_of"), len(accounts), "no call is started after one has failed")
}

func TestDAOsListTheFactory(t *testing.T) {
	c, fake := newClient(t)
	daos, err := c.DAOs(t.Context(), snapshots.Mainnet, 100_000)
	require.NoError(t, err)
	assert.Contains(t, daos, "marketing.sputnik-dao.near")
	assert.Equal(t, 1, fake.CountCalls("get_daos"))
	few, err := c.DAOs(t.Context(), snapshots.Mainnet, 2)
	require.NoError(t, err)
	assert.Len(t, few, 2, "the list stops at max")
}

func TestContractErrorsArePetals(t *testing.T) {
	c, _ := pagedClient(t)
	r, err := c.Pin(t.Context(), snapshots.Mainnet)
	require.NoError(t, err)
	_, err = r.DAORoles(t.Context(), "broken.sputnik-dao.near")
	assert.True(t, errs.Is(err, errs.CannotRead), "%v", err)
	_, err = r.DAOProfile(t.Context(), "nope.sputnik-dao.near")
	assert.True(t, errs.Is(err, errs.NotFound), "%v", err)
	_, err = r.Delegators(t.Context(), "broken.poolv1.near", 10, func(int, int) {})
	assert.True(t, errs.Is(err, errs.CannotRead), "%v", err)
}

var _ ports.NearReading = (*reading)(nil)
