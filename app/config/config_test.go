package config_test

import (
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/domain/credit"
)

func load(env map[string]string) (config.Config, error) {
	return config.LoadConfig(func(k string) string { return env[k] })
}

func TestConfigDefaults(t *testing.T) {
	c, err := load(nil)
	require.NoError(t, err)
	assert.Equal(t, "localhost:8787", c.Addr)
	assert.Equal(t, "", c.DatabaseURL)
	assert.Equal(t, ".petal", c.DataDir)
	assert.Equal(t, "gated", c.AgentAccess)
	assert.False(t, c.Public)
	assert.True(t, c.Migrate)
	assert.Equal(t, 60, c.ToolCallsPerMinute)
	assert.Equal(t, 10, c.NewChatsPerHour)
	assert.Equal(t, 60, c.FollowUpsPerHour)
	assert.Equal(t, 10*time.Second, c.ShutdownDrain)
	assert.Equal(t, credit.Micros(3_000_000), c.LLMDailyCap)
	assert.Equal(t, credit.Micros(500_000), c.PersonPerChat)
	assert.Equal(t, "recorded", c.LLM())
	assert.True(t, c.ShowsDemoMap(), "a local site shows the demo map by default")
}

// The demo map: on by default, off when turned off, never on a public site.
func TestTheDemoMapIsNeverOnAPublicSite(t *testing.T) {
	for env, want := range map[[2]string]bool{
		{"", ""}: true, {"off", ""}: false, {"", "1"}: false, {"on", "1"}: false, {"on", "0"}: true,
	} {
		c, err := load(map[string]string{"PETAL_DEMO_MAP": env[0], "PETAL_PUBLIC": env[1]})
		require.NoError(t, err, env)
		assert.Equal(t, want, c.ShowsDemoMap(), "PETAL_DEMO_MAP=%q PETAL_PUBLIC=%q", env[0], env[1])
	}
}

// A bad value stops the start with a message naming the variable.
func TestABadValueNamesTheVariable(t *testing.T) {
	cases := map[string][]string{
		"PETAL_ADDR":                     {"8787", "nohostport"},
		"PETAL_METRICS_ADDR":             {"9090", "localhost:8787"}, // the second is PETAL_ADDR's default
		"PETAL_API":                      {"petal.example", "ftp://petal.example", "https://"},
		"PETAL_PUBLIC":                   {"maybe", "2"},
		"PETAL_MIGRATE":                  {"later"},
		"PETAL_LOG_FORMAT":               {"xml"},
		"NEAR_AI_BASE_URL":               {"not a url"},
		"PETAL_NEAR_RPC_MAINNET":         {"rpc.mainnet.near.org"},
		"PETAL_NEAR_RPC_TESTNET":         {"file:///etc/passwd"},
		"PETAL_NEAR_USD":                 {"cheap", "0", "-1"},
		"PETAL_TOOL_CALLS_PER_MIN":       {"many", "0", "-5", "1.5"},
		"PETAL_NEW_CHATS_PER_HOUR":       {"x"},
		"PETAL_FOLLOWUPS_PER_HOUR":       {"0"},
		"PETAL_FRESH_READS":              {"two"},
		"PETAL_FRESH_READ_TIMEOUT_S":     {"60s"},
		"PETAL_RUN_MAX_S":                {"-1"},
		"PETAL_LLM_DAILY_USD":            {"three", "-3", "1e3"},
		"PETAL_PERSON_USD_PER_CHAT":      {"0,50"},
		"PETAL_FEE_CALL_PERCENT":         {"2.555", "-1", "101", "0.5%"},
		"PETAL_FEE_TOPUP_PERCENT":        {"1e1", "abc"},
		"PETAL_FEE_PER_TURN_USD":         {"0.0000001", "-0.01"},
		"PETAL_FEE_PER_TOOL":             {"render_flower", "render_flower=1.0000001", "a=1,a=2"},
		"PETAL_FEE_FREE_ALLOWANCE_USD":   {"one"},
		"PETAL_POSTED_SNAPSHOTS_PER_DAY": {"lots"},
		"PETAL_SHUTDOWN_DRAIN_S":         {"10s", "0"},
	}
	for name, values := range cases {
		for _, v := range values {
			_, err := load(map[string]string{name: v})
			if assert.Error(t, err, "%s=%q", name, v) {
				assert.Contains(t, err.Error(), name+":", "%s=%q", name, v)
			}
		}
	}
	// Several at once are all named, so one start tells everything.
	_, err := load(map[string]string{"PETAL_ADDR": "x", "PETAL_RUN_MAX_S": "y"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PETAL_ADDR:")
	assert.Contains(t, err.Error(), "PETAL_RUN_MAX_S:")
}

// Only the word open opens the agent: anything unrecognised means gated.
// Issue 33 #8: one address's share of the day's posted readings stays below
// the site's cap, or one poster takes them all and refuses everyone else.
func TestThePostedShareStaysBelowTheSitesCap(t *testing.T) {
	for _, env := range []map[string]string{
		{"PETAL_POSTED_SNAPSHOTS_PER_DAY": "20", "PETAL_POSTED_SNAPSHOTS_PER_ADDRESS": "20"},
		{"PETAL_POSTED_SNAPSHOTS_PER_DAY": "20", "PETAL_POSTED_SNAPSHOTS_PER_ADDRESS": "50"},
		{"PETAL_POSTED_SNAPSHOTS_PER_DAY": "10"}, // the default share, 20
		{"PETAL_POSTED_SNAPSHOTS_PER_DAY": "1", "PETAL_POSTED_SNAPSHOTS_PER_ADDRESS": "1"},
	} {
		_, err := load(env)
		if assert.Error(t, err, "%v", env) {
			assert.Contains(t, err.Error(), "PETAL_POSTED_SNAPSHOTS_PER_ADDRESS:")
			assert.Contains(t, err.Error(), "is not below PETAL_POSTED_SNAPSHOTS_PER_DAY")
		}
	}
	c, err := load(map[string]string{"PETAL_POSTED_SNAPSHOTS_PER_DAY": "20", "PETAL_POSTED_SNAPSHOTS_PER_ADDRESS": "19"})
	require.NoError(t, err)
	caps := c.PostedCaps()
	assert.Equal(t, 20, caps.Site)
	assert.Equal(t, 19, caps.PerAddress)
	assert.Equal(t, 19, caps.PerOwner)
	c, err = load(nil)
	require.NoError(t, err)
	assert.Less(t, c.PostedCaps().PerAddress, c.PostedCaps().Site, "the defaults hold it")
}

// Issue 33 #14: a network's RPC is one address or a comma list, each an
// http(s) address, in the order given.
func TestNearRPCTakesAListOfEndpoints(t *testing.T) {
	c, err := load(map[string]string{"PETAL_NEAR_RPC_MAINNET": "https://a.example/rpc, https://b.example,"})
	require.NoError(t, err)
	assert.Equal(t, []string{"https://a.example/rpc", "https://b.example"}, c.NearRPCMainnet)
	assert.Equal(t, []string{"https://rpc.testnet.near.org"}, c.NearRPCTestnet)
	for _, v := range []string{"https://a.example,b.example", ",", "https://a.example,ftp://b.example"} {
		_, err := load(map[string]string{"PETAL_NEAR_RPC_MAINNET": v})
		if assert.Error(t, err, v) {
			assert.Contains(t, err.Error(), "PETAL_NEAR_RPC_MAINNET:", v)
		}
	}
}

// /signin's wallet list and the hosts its CSP opens are settings like any
// other (issue 27): a host that is not an origin is refused, not dropped.
func TestWalletConnectorSettings(t *testing.T) {
	defaults := []string{"https://default.example"}
	c, err := load(nil)
	require.NoError(t, err)
	assert.Empty(t, c.WalletManifest)
	assert.Equal(t, defaults, c.WalletHostsOrDefault(defaults), "the default manifest's wallets' hosts")
	c, err = load(map[string]string{"PETAL_WALLET_MANIFEST": "http://127.0.0.1:9/manifest.json"})
	require.NoError(t, err)
	assert.Empty(t, c.WalletHostsOrDefault(defaults), "a manifest of one's own opens only its origin")
	c, err = load(map[string]string{"PETAL_WALLET_HOSTS": "https://a.example, http://127.0.0.1:9"})
	require.NoError(t, err)
	assert.Equal(t, []string{"https://a.example", "http://127.0.0.1:9"}, c.WalletHostsOrDefault(defaults))
	for name, values := range map[string][]string{
		"PETAL_WALLET_MANIFEST": {"manifest.json", "ftp://a.example/m.json"},
		"PETAL_WALLET_HOSTS":    {"a.example", "https://a.example/path", "https://a.example; script-src *", "https://*.example", "'unsafe-inline'"},
	} {
		for _, v := range values {
			_, err := load(map[string]string{name: v})
			if assert.Error(t, err, "%s=%q", name, v) {
				assert.Contains(t, err.Error(), name+":", "%s=%q", name, v)
			}
		}
	}
}

func TestAgentAccessIsGatedUnlessOpen(t *testing.T) {
	for value, want := range map[string]string{
		"open": "open", "OPEN": "open", " open ": "open",
		"": "gated", "gated": "gated", "opne": "gated", "opened": "gated", "true": "gated", "1": "gated", "closed": "gated",
	} {
		c, err := load(map[string]string{"PETAL_AGENT_ACCESS": value})
		require.NoError(t, err, "%q is never an error", value)
		assert.Equal(t, want, c.AgentAccess, "PETAL_AGENT_ACCESS=%q", value)
	}
}

func TestPublicSiteNeverLoadsTheModelKey(t *testing.T) {
	c, err := load(map[string]string{"PETAL_PUBLIC": "1", "NEAR_AI_API_KEY": "sk-x", "PETAL_AGENT_ACCESS": "open"})
	require.NoError(t, err)
	assert.True(t, c.Public)
	assert.Empty(t, c.ModelKey)
	assert.Equal(t, "none", c.LLM())
	assert.Equal(t, "none", c.AgentAccessReported())

	c, err = load(map[string]string{"NEAR_AI_API_KEY": "sk-x", "PETAL_API": "https://petal.example/"})
	require.NoError(t, err)
	assert.Equal(t, "near-ai", c.LLM())
	assert.Equal(t, "https://petal.example", c.PublicURL, "a trailing slash is dropped")
	assert.True(t, c.Secure())
}

func TestBooleansAcceptTheUsualWords(t *testing.T) {
	for _, on := range []string{"1", "true", "yes", "on", "ON"} {
		c, err := load(map[string]string{"PETAL_PUBLIC": on, "PETAL_MIGRATE": on})
		require.NoError(t, err)
		assert.True(t, c.Public && c.Migrate, on)
	}
	for _, off := range []string{"0", "false", "no", "off", "Off"} {
		c, err := load(map[string]string{"PETAL_PUBLIC": off, "PETAL_MIGRATE": off})
		require.NoError(t, err)
		assert.False(t, c.Public || c.Migrate, off)
	}
}

// The base-fee switches are all off by default, and read exactly when set.
func TestFeeSwitches(t *testing.T) {
	c, err := load(nil)
	require.NoError(t, err)
	assert.Equal(t, credit.Price{PerTool: map[string]credit.Micros{}}, c.Price())
	off := c.Price().Doc().BaseFee
	assert.False(t, off.A.On || off.B.On || off.C.On || off.D.On || off.E.On)

	c, err = load(map[string]string{"PETAL_FEE_CALL_PERCENT": "2.5", "PETAL_FEE_TOPUP_PERCENT": "1", "PETAL_FEE_PER_TURN_USD": "0.003",
		"PETAL_FEE_PER_TOOL": "render_flower=0.01,get_snapshot=0.02", "PETAL_FEE_FREE_ALLOWANCE_USD": "0.25"})
	require.NoError(t, err)
	assert.Equal(t, credit.Price{CallFeeBps: 250, TopUpFeeBps: 100, PerTurn: 3_000,
		PerTool: map[string]credit.Micros{"render_flower": 10_000, "get_snapshot": 20_000}, FreeAllowance: 250_000}, c.Price())
}

func TestTestnetCountsOnlyWhereItBuysNothingReal(t *testing.T) {
	for _, tc := range []struct {
		env    map[string]string
		counts bool
		warn   bool
	}{
		{nil, true, false}, // the recorded model
		{map[string]string{"NEAR_AI_API_KEY": "k"}, false, false}, // NEAR AI bills real dollars
		{map[string]string{"NEAR_AI_API_KEY": "k", "PETAL_PAY_TESTNET": "1"}, true, true},
		{map[string]string{"PETAL_PUBLIC": "1", "PETAL_PAY_TESTNET": "1"}, false, false}, // a public site counts mainnet only
	} {
		c, err := load(tc.env)
		require.NoError(t, err)
		assert.Equal(t, tc.counts, c.TestnetCounts(), "%v", tc.env)
		assert.Equal(t, tc.warn, c.TestnetWarning() != "", "%v", tc.env)
	}
	_, err := load(map[string]string{"PETAL_PAY_TESTNET": "maybe"})
	assert.ErrorContains(t, err, "PETAL_PAY_TESTNET")
}

func TestEVMEndpointsPerChain(t *testing.T) {
	env := map[string]string{
		"PETAL_EVM_RPC_100":  "https://rpc.gnosis.test, https://backup.gnosis.test",
		"PETAL_EVM_CHAINS":   "1337",
		"PETAL_EVM_RPC_1337": "http://127.0.0.1:8545",
		"PETAL_EVM_RPC_5":    "https://not-listed.test", // no PETAL_EVM_CHAINS entry: not read
	}
	c, err := config.LoadConfig(func(k string) string { return env[k] })
	require.NoError(t, err)
	assert.Equal(t, map[uint64][]string{
		100:  {"https://rpc.gnosis.test", "https://backup.gnosis.test"},
		1337: {"http://127.0.0.1:8545"},
	}, c.EVMRPC)
	assert.Equal(t, 2_000_000, c.EVMMaxLogs)
	assert.Equal(t, 500_000, c.EVMMaxHolders)

	_, err = config.LoadConfig(func(k string) string {
		return map[string]string{"PETAL_EVM_RPC_1": "ftp://x", "PETAL_EVM_CHAINS": "x"}[k]
	})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "PETAL_EVM_RPC_1: an endpoint is not an http(s) URL")
	assert.Contains(t, err.Error(), `PETAL_EVM_CHAINS: "x" is not a chain id`)
}

// The commands' Getenv finds every PETAL_EVM_RPC_<id> in the environment:
// a chain with endpoints set is read without being listed.
func TestGetenvReadsEveryChainWithEndpointsSet(t *testing.T) {
	t.Setenv("PETAL_EVM_RPC_31337", "http://127.0.0.1:8545")
	t.Setenv("PETAL_EVM_RPC_100", "https://rpc.gnosis.test")
	t.Setenv("PETAL_EVM_RPC_NOPE", "https://not-a-chain.test")
	t.Setenv("PETAL_EVM_CHAINS", "1337")
	t.Setenv("PETAL_EVM_RPC_1337", "http://127.0.0.1:9545")
	c, err := config.LoadConfig(config.Getenv)
	require.NoError(t, err)
	assert.Equal(t, []string{"http://127.0.0.1:8545"}, c.EVMRPC[31337], "found by its variable alone")
	assert.Equal(t, []string{"http://127.0.0.1:9545"}, c.EVMRPC[1337], "listed and set")
	assert.Equal(t, []string{"https://rpc.gnosis.test"}, c.EVMRPC[100])
	assert.Len(t, c.EVMRPC, 3, "PETAL_EVM_RPC_NOPE names no chain")
	assert.Equal(t, os.Getenv("PETAL_API"), config.Getenv("PETAL_API"), "every other variable as os.Getenv reads it")
}
