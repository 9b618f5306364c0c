package config

import (
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/people"
)

// Config is everything petal reads from its environment. docs/operations.md and
// .env.example list every variable with its default; keep the three in step.
type Config struct {
	Addr            string        // PETAL_ADDR
	MetricsAddr     string        // PETAL_METRICS_ADDR: metrics and pprof listener; empty: none
	DatabaseURL     string        // DATABASE_URL; empty means find or start a local PostgreSQL
	DatabaseDirect  string        // DATABASE_DIRECT_URL: PostgreSQL itself when DATABASE_URL is a pooler
	DataDir         string        // PETAL_DATA_DIR: where a private PostgreSQL cluster lives
	BlobURL         string        // PETAL_BLOB_URL: where snapshot bodies and pictures are kept; "" decided by BlobsFor, BlobsOff: in PostgreSQL
	BlobRedirect    bool          // PETAL_BLOB_REDIRECT: snapshot bodies' readers sent to the store's signed URL
	PublicURL       string        // PETAL_API: the site's public address; decides recipient, Origin and cookie
	AgentAccess     string        // PETAL_AGENT_ACCESS: "gated" or "open"
	Public          bool          // PETAL_PUBLIC
	DemoMap         bool          // PETAL_DEMO_MAP: demo drawings on an empty map (never on a public site: see ShowsDemoMap)
	Migrate         bool          // PETAL_MIGRATE (off skips migrations at start)
	LogFormat       string        // PETAL_LOG_FORMAT: "json", "text" or "" (json unless a terminal)
	WalletKey       string        // PETAL_WALLET_KEY: 32 bytes, hex or base64
	ModelKey        string        // NEAR_AI_API_KEY
	ModelBaseURL    string        // NEAR_AI_BASE_URL
	Model           string        // NEAR_AI_MODEL
	FallbackModel   string        // NEAR_AI_FALLBACK_MODEL
	NearRPCMainnet  []string      // PETAL_NEAR_RPC_MAINNET: endpoints in the order tried
	NearRPCTestnet  []string      // PETAL_NEAR_RPC_TESTNET
	FastNEARMainnet string        // PETAL_FASTNEAR_MAINNET: FastNEAR's API, the token holder index
	FastNEARTestnet string        // PETAL_FASTNEAR_TESTNET
	NearUSD         string        // PETAL_NEAR_USD: fixes the NEAR price when set
	OneClickURL     string        // PETAL_ONECLICK_URL: NEAR Intents' 1Click API, whose token list prices NEAR
	OneClickKey     string        // PETAL_ONECLICK_KEY: a 1Click partner key (JWT); empty: none, 1Click adds its fee
	ReceiverMain    string        // PETAL_RECEIVER_MAINNET: where money is sent on mainnet (NEAR, and NEAR Intents' USDC)
	ReceiverTest    string        // PETAL_RECEIVER_TESTNET: where testnet NEAR is sent
	PayTestnet      bool          // PETAL_PAY_TESTNET: testnet NEAR counts even where the model is paid (NEAR AI)
	NearPriceKeep   time.Duration // PETAL_NEAR_PRICE_KEEP_DAYS: how long the NEAR price history is kept

	ToolCallsPerMinute    int                      // PETAL_TOOL_CALLS_PER_MIN
	NewChatsPerHour       int                      // PETAL_NEW_CHATS_PER_HOUR
	FollowUpsPerHour      int                      // PETAL_FOLLOWUPS_PER_HOUR
	FreshReadsAtOnce      int                      // PETAL_FRESH_READS
	FreshReadTimeout      time.Duration            // PETAL_FRESH_READ_TIMEOUT_S
	NearPageSize          int                      // PETAL_NEAR_PAGE_SIZE
	EVMRPC                map[uint64][]string      // PETAL_EVM_RPC_<chain id>: each EVM chain's endpoints, in failover order
	EVMMaxLogs            int                      // PETAL_EVM_MAX_LOGS
	EVMMaxHolders         int                      // PETAL_EVM_MAX_HOLDERS
	RunMax                time.Duration            // PETAL_RUN_MAX_S
	LLMDailyCap           credit.Micros            // PETAL_LLM_DAILY_USD
	PersonPerChat         credit.Micros            // PETAL_PERSON_USD_PER_CHAT
	FeeCallBps            int64                    // PETAL_FEE_CALL_PERCENT (A), in basis points
	FeeTopUpBps           int64                    // PETAL_FEE_TOPUP_PERCENT (B), in basis points
	FeePerTurn            credit.Micros            // PETAL_FEE_PER_TURN_USD (C)
	FeePerTool            map[string]credit.Micros // PETAL_FEE_PER_TOOL (D)
	FeeFreeAllowance      credit.Micros            // PETAL_FEE_FREE_ALLOWANCE_USD (E)
	PostedSnapshotsPerDay int                      // PETAL_POSTED_SNAPSHOTS_PER_DAY
	PostedPerAddress      int                      // PETAL_POSTED_SNAPSHOTS_PER_ADDRESS (and per owner)
	DataBudgetBytes       int64                    // PETAL_DATA_BUDGET_MB, in bytes
	LargeDecodes          int                      // PETAL_LARGE_DECODES
	ShutdownDrain         time.Duration            // PETAL_SHUTDOWN_DRAIN_S
	Limits                string                   // PETAL_LIMITS: "memory", "postgres", or "" (decided by the database, see LimitsFor)
	TrustedProxies        []netip.Prefix           // PETAL_TRUSTED_PROXIES: peers whose cf-connecting-ip is believed
	DBPoolSize            int                      // PETAL_DB_POOL_SIZE
	DBStatementTimeout    time.Duration            // PETAL_DB_STATEMENT_TIMEOUT_S
	BodyTimeout           time.Duration            // PETAL_BODY_TIMEOUT_S
	SSEPerAddress         int                      // PETAL_SSE_PER_ADDRESS
	RetainAnon            time.Duration            // PETAL_RETAIN_ANON_DAYS; 0 keeps them
	MapSyncMin            int                      // PETAL_MAP_SYNC_MIN; 0 turns the map's SocialDB sync off
	MapMarksMin           int                      // PETAL_MAP_MARKS_MIN; 0 turns the reading of maps' marks off
	MapRefreshPerDay      int                      // PETAL_MAP_REFRESH_PER_DAY; 0 (the default) turns the map's own re-reading off
	RecordedPace          time.Duration            // PETAL_RECORDED_PACE_MS
	SearchAPIKey          string                   // PETAL_SEARCH_API_KEY: the Brave Search API key; empty: no web search
	SearchURL             string                   // PETAL_SEARCH_URL: the Brave Search API's base
	ReadPageLoopback      bool                     // PETAL_READ_PAGE_LOOPBACK: read_page may read this machine (tests only)
	WalletManifest        string                   // PETAL_WALLET_MANIFEST: /signin's wallet list; empty: the connector's own
	WalletHosts           []string                 // PETAL_WALLET_HOSTS: origins /signin's wallets reach; nil: unset (see WalletHostsOrDefault)
}

// Variable is one environment variable petal reads, with its default and meaning.
type Variable struct {
	Name, Default, Meaning string
}

// Variables lists every setting, in the order docs present them.
var Variables = []Variable{
	{"PETAL_ADDR", "localhost:8787", "listen address"},
	{"PETAL_METRICS_ADDR", "", "listen address of the metrics listener (Prometheus /metrics and pprof under /debug/pprof/); empty: none. Never the public address"},
	{"DATABASE_URL", "", "PostgreSQL URL; empty finds a local server or starts a private one"},
	{"DATABASE_DIRECT_URL", "", "PostgreSQL itself when DATABASE_URL is a transaction pooler (PgBouncer): LISTEN and migrations use it, the pool sends no statement_timeout; empty: DATABASE_URL is direct"},
	{"PETAL_DATA_DIR", ".petal", "folder for petal's private PostgreSQL cluster, when one is started"},
	{"PETAL_BLOB_URL", "", "where snapshot bodies and pictures are kept, by their SHA-256: a go-cloud bucket URL (file:///abs/dir, s3://bucket?region=…&endpoint=…, gs://…, azblob://…) or off (in PostgreSQL's rows); empty: the folder blobs under PETAL_DATA_DIR when petal runs its private cluster, else off. Every replica must reach the same store: a file:// folder serves replicas on one machine only. The move_bodies job moves rows' bodies into it"},
	{"PETAL_BLOB_REDIRECT", "off", "on: GET /api/v1/snapshots/<sha256> answers a gzip-taking reader whose body is in the blob store with a 302 to the store's signed URL (15 minutes), which serves the stored gzip; only stores that sign URLs with the response's headers (s3:// and S3-compatible servers): any other, or off, refuses the start. Pictures are always served by petal, which sends their CSP"},
	{"PETAL_API", "", "the site's public address (https://… makes the cookie __Host- and Secure)"},
	{"PETAL_AGENT_ACCESS", "gated", "gated (an invite or credit is needed for the agent) or open"},
	{"PETAL_PUBLIC", "0", "1: a public site that reads nothing from outside for visitors"},
	{"PETAL_DEMO_MAP", "on", "on: while no real flower is published here, the map shows a few demo drawings of made-up readings, each marked demo (never stored; always off on a public site); off: an empty map says so"},
	{"PETAL_MIGRATE", "on", "off: do not apply migrations at start"},
	{"PETAL_LOG_FORMAT", "", "json or text; empty: json unless stdout is a terminal"},
	{"PETAL_WALLET_KEY", "", "32 bytes (hex or base64) sealing wallet addresses; required on a gated server with a model key, else a throwaway key per process"},
	{"NEAR_AI_API_KEY", "", "model key; empty uses the recorded model"},
	{"NEAR_AI_BASE_URL", "https://cloud-api.near.ai/v1", "NEAR AI's OpenAI-compatible base URL"},
	{"NEAR_AI_MODEL", "deepseek-ai/DeepSeek-V3.1", "the model Petals' agent runs on (one of the catalogue)"},
	{"NEAR_AI_FALLBACK_MODEL", "openai/gpt-oss-120b", "the model tried once when the first fails on NEAR AI's side"},
	{"PETAL_NEAR_RPC_MAINNET", "https://rpc.mainnet.near.org", "NEAR RPC for mainnet: one address, or several separated by commas, tried in order; a call an endpoint fails (unreachable, timeout, 5xx, 429) goes on to the next, which stays first until it fails"},
	{"PETAL_NEAR_RPC_TESTNET", "https://rpc.testnet.near.org", "NEAR RPC for testnet: one address or a comma list, as PETAL_NEAR_RPC_MAINNET"},
	{"PETAL_FASTNEAR_MAINNET", "https://api.fastnear.com", "FastNEAR's API on mainnet: near-ft-holders asks it a token's top holders (GET /v1/ft/{token}/top), whose balances are then read on chain"},
	{"PETAL_FASTNEAR_TESTNET", "https://test.api.fastnear.com", "FastNEAR's API on testnet, as PETAL_FASTNEAR_MAINNET"},
	{"PETAL_NEAR_USD", "", "fixes dollars per NEAR for top-ups; empty reads it from NEAR Intents' token list"},
	{"PETAL_ONECLICK_URL", "https://1click.chaindefuser.com", "NEAR Intents' 1Click API, whose token list (GET /v0/tokens) gives dollars per NEAR"},
	{"PETAL_ONECLICK_KEY", "", "a 1Click partner key (a JWT) sent with quotes and status reads; empty: none, and 1Click adds its own fee to each swap"},
	{"PETAL_RECEIVER_MAINNET", "petals.near", "the account money goes to on mainnet: NEAR transfers (POST /api/v1/pay) and NEAR Intents top-ups' USDC; a public site, or an https:// site with a model key, refuses to start with one it can't read on chain"},
	{"PETAL_RECEIVER_TESTNET", "petals.testnet", "the account testnet NEAR goes to (POST /api/v1/pay)"},
	{"PETAL_NEAR_PRICE_KEEP_DAYS", "400", "days the NEAR price history (read every 10 minutes) is kept; a transfer older than that can't be priced"},
	{"PETAL_PAY_TESTNET", "0", "1: testnet NEAR (free) adds credit that pays for real NEAR AI calls (a test lane only; warned at start). Without it testnet counts only where the model is the recorded one"},
	{"PETAL_TOOL_CALLS_PER_MIN", "60", "tool calls per address per minute"},
	{"PETAL_NEW_CHATS_PER_HOUR", "10", "new agent chats per address per hour"},
	{"PETAL_FOLLOWUPS_PER_HOUR", "60", "follow-ups on an existing run per address per hour"},
	{"PETAL_FRESH_READS", "2", "fresh chain reads at once on the site (every process, with PETAL_LIMITS=postgres), one at a time per address"},
	{"PETAL_FRESH_READ_TIMEOUT_S", "60", "seconds before a fresh read answers source_failed"},
	{"PETAL_EVM_RPC_1", "", "JSON-RPC endpoints of Ethereum (eip155:1), comma-separated, tried in order (failover); empty: the chain is not read"},
	{"PETAL_EVM_RPC_10", "", "JSON-RPC endpoints of Optimism (eip155:10), as PETAL_EVM_RPC_1"},
	{"PETAL_EVM_RPC_100", "", "JSON-RPC endpoints of Gnosis (eip155:100), as PETAL_EVM_RPC_1"},
	{"PETAL_EVM_RPC_8453", "", "JSON-RPC endpoints of Base (eip155:8453), as PETAL_EVM_RPC_1"},
	{"PETAL_EVM_RPC_42161", "", "JSON-RPC endpoints of Arbitrum One (eip155:42161), as PETAL_EVM_RPC_1"},
	{"PETAL_EVM_CHAINS", "", "other EVM chain ids to read (comma-separated, such as 1337 for a development chain), each from its PETAL_EVM_RPC_<chain id>; petal's commands add every chain whose PETAL_EVM_RPC_<chain id> is set, so listing one is needed only where the configuration is read from elsewhere"},
	{"PETAL_EVM_MAX_LOGS", "2000000", "most logs (Transfer, DelegateVotesChanged) one EVM reading reads; past it the reading is refused with cannot_read"},
	{"PETAL_EVM_MAX_HOLDERS", "500000", "most accounts one EVM reading keeps in memory at once (about 100 bytes each); past it the reading is refused with cannot_read"},
	{"PETAL_NEAR_PAGE_SIZE", "100", "items per page when a reader pages through a contract (proposals, delegators, DAOs)"},
	{"PETAL_RUN_MAX_S", "300", "wall time of one agent chat, in seconds"},
	{"PETAL_LLM_DAILY_USD", "3", "daily cap on unpaid model spend, in dollars"},
	{"PETAL_PERSON_USD_PER_CHAT", "0.50", "most a person's own credit pays for one chat, in dollars"},
	{"PETAL_FEE_CALL_PERCENT", "0", "base fee A: a percent of each model call's bill on a person's own credit (like 2.5; 0: off)"},
	{"PETAL_FEE_TOPUP_PERCENT", "0", "base fee B: a percent of each NEAR top-up (like 1; 0: off)"},
	{"PETAL_FEE_PER_TURN_USD", "0", "base fee C: dollars per turn (a model answer that asks for no tool) on a person's own credit (0: off)"},
	{"PETAL_FEE_PER_TOOL", "", "base fee D: dollars per use of a tool by the agent, by name, like render_flower=0.01,get_snapshot=0.02 (empty: off)"},
	{"PETAL_FEE_FREE_ALLOWANCE_USD", "0", "base fee E: a person's first dollars of NEAR AI's bill carry no base fee (0: off)"},
	{"PETAL_POSTED_SNAPSHOTS_PER_DAY", "200", "new posted readings accepted a day"},
	{"PETAL_POSTED_SNAPSHOTS_PER_ADDRESS", "20", "of those, the most one address, and one exploration owner, may post a day: a share strictly below PETAL_POSTED_SNAPSHOTS_PER_DAY (a start with it at or above is refused), so one poster can't take the day's for everyone"},
	{"PETAL_DATA_BUDGET_MB", "512", "megabytes (MiB) that callers who aren't signed in may store a day, all together; past it their writes answer 429 budget_exhausted"},
	{"PETAL_LARGE_DECODES", "2", "snapshot bodies over 1 MiB (inflated) decoded at once in one process, stored or posted; the rest wait their turn"},
	{"PETAL_SHUTDOWN_DRAIN_S", "10", "seconds to drain requests at shutdown"},
	{"PETAL_LIMITS", "", "where per-address limits and fresh-read slots are counted: postgres (shared by every process on the database) or memory (this process only); empty: memory only when petal started its own private cluster, else postgres"},
	{"PETAL_TRUSTED_PROXIES", "", "CIDRs of the proxies whose cf-connecting-ip is believed, like 10.0.0.0/8,2001:db8::/32; empty: none, every address is the socket's peer"},
	{"PETAL_DB_POOL_SIZE", "10", "most connections one process's pool opens to PostgreSQL; its two listeners (the event bus's and the map's) hold one more each, so a process holds up to pool + 2"},
	{"PETAL_DB_STATEMENT_TIMEOUT_S", "30", "seconds PostgreSQL lets one statement of petal's pool run before cancelling it"},
	{"PETAL_BODY_TIMEOUT_S", "30", "seconds a client has to send a request's body; a slower body is cut (streams and long polls send none, so are not cut)"},
	{"PETAL_SSE_PER_ADDRESS", "20", "event streams one address may hold open at once on one process"},
	{"PETAL_RETAIN_ANON_DAYS", "90", "days after which anonymous runs and explorations nobody changed or opened are deleted; 0 keeps them"},
	{"PETAL_MAP_SYNC_MIN", "10", "minutes between reads of SocialDB for flowers published elsewhere (docs/map.md); 0 turns the sync off"},
	{"PETAL_MAP_MARKS_MIN", "10", "minutes between runs of the map_marks job, which reads the marks (name, symbol, logo) of maps that have none or a stale one (docs/map.md); 0 turns it off"},
	{"PETAL_MAP_REFRESH_PER_DAY", "0", "fresh readings a day the map_refresh job may make of the maps people look at most, shared by every replica (docs/map.md, \"A map that keeps itself fresh\"); 0 turns it off; a public site never runs it"},
	{"PETAL_RECORDED_PACE_MS", "700", "pause before each answer of the recorded model, in milliseconds, so a person sees the demo unfold (0: none)"},
	{"PETAL_SEARCH_API_KEY", "", "a Brave Search API key (X-Subscription-Token) for the search tool; empty: search answers 503 source_failed and Petals' agent is not offered it"},
	{"PETAL_SEARCH_URL", "https://api.search.brave.com", "the Brave Search API's base URL (tests point it at a fake)"},
	{"PETAL_READ_PAGE_LOOPBACK", "0", "1: read_page may read pages on this machine's loopback (tests only; refused when PETAL_API is an https:// site). Private networks stay refused"},
	{"PETAL_WALLET_MANIFEST", "", "the http(s) address of the wallet list /signin's connector (@hot-labs/near-connect) reads; empty: the connector's own (HOT's, docs/pages.md)"},
	{"PETAL_WALLET_HOSTS", "", "origins (scheme://host[:port], comma-separated) /signin and its wallets may connect to beside the manifest's; empty: the default manifest's wallets' hosts, or with a manifest of one's own none but its origin"},
}

// LoadConfig reads the configuration through getenv (os.Getenv in production).
// A bad value stops the start with an error naming the variable.
func LoadConfig(getenv func(string) string) (Config, error) {
	get := func(name string) string {
		if v := strings.TrimSpace(getenv(name)); v != "" {
			return v
		}
		for _, v := range Variables {
			if v.Name == name {
				return v.Default
			}
		}
		return ""
	}
	var problems []string
	bad := func(name, why string) { problems = append(problems, fmt.Sprintf("%s: %s", name, why)) }
	posInt := func(name string) int {
		n, err := strconv.Atoi(get(name))
		if err != nil || n <= 0 {
			bad(name, fmt.Sprintf("%q is not a positive whole number", get(name)))
		}
		return n
	}
	nonNegInt := func(name string) int {
		n, err := strconv.Atoi(get(name))
		if err != nil || n < 0 {
			bad(name, fmt.Sprintf("%q is not a whole number, 0 or more", get(name)))
		}
		return n
	}
	usd := func(name string) credit.Micros {
		m, err := credit.ParseUSD(get(name))
		if err != nil || m < 0 {
			bad(name, fmt.Sprintf("%q is not a dollar amount (like 0.50)", get(name)))
		}
		return m
	}
	percent := func(name string) int64 {
		bps, err := credit.ParsePercentBps(get(name))
		if err != nil {
			bad(name, err.Error())
		}
		return bps
	}
	// A size in MiB, fractions allowed (0.5 is 512 KiB).
	megabytes := func(name string) int64 {
		f, err := strconv.ParseFloat(get(name), 64)
		if err != nil || !(f > 0) || f > 1<<40 {
			bad(name, fmt.Sprintf("%q is not a positive number of megabytes", get(name)))
			return 0
		}
		return int64(f * (1 << 20))
	}
	boolean := func(name string) bool {
		switch strings.ToLower(get(name)) {
		case "1", "true", "yes", "on":
			return true
		case "0", "false", "no", "off", "":
			return false
		}
		bad(name, fmt.Sprintf("%q is not on/off (1 or 0)", get(name)))
		return false
	}

	c := Config{
		Addr:            get("PETAL_ADDR"),
		MetricsAddr:     get("PETAL_METRICS_ADDR"),
		DatabaseURL:     get("DATABASE_URL"),
		DatabaseDirect:  get("DATABASE_DIRECT_URL"),
		DataDir:         get("PETAL_DATA_DIR"),
		BlobURL:         get("PETAL_BLOB_URL"),
		BlobRedirect:    boolean("PETAL_BLOB_REDIRECT"),
		PublicURL:       strings.TrimRight(get("PETAL_API"), "/"),
		AgentAccess:     "gated",
		Public:          boolean("PETAL_PUBLIC"),
		DemoMap:         boolean("PETAL_DEMO_MAP"),
		Migrate:         boolean("PETAL_MIGRATE"),
		LogFormat:       get("PETAL_LOG_FORMAT"),
		WalletKey:       get("PETAL_WALLET_KEY"),
		ModelKey:        get("NEAR_AI_API_KEY"),
		ModelBaseURL:    strings.TrimRight(get("NEAR_AI_BASE_URL"), "/"),
		Model:           get("NEAR_AI_MODEL"),
		FallbackModel:   get("NEAR_AI_FALLBACK_MODEL"),
		NearRPCMainnet:  endpoints(get("PETAL_NEAR_RPC_MAINNET")),
		NearRPCTestnet:  endpoints(get("PETAL_NEAR_RPC_TESTNET")),
		FastNEARMainnet: strings.TrimRight(get("PETAL_FASTNEAR_MAINNET"), "/"),
		FastNEARTestnet: strings.TrimRight(get("PETAL_FASTNEAR_TESTNET"), "/"),
		NearUSD:         get("PETAL_NEAR_USD"),
		OneClickURL:     strings.TrimRight(get("PETAL_ONECLICK_URL"), "/"),
		OneClickKey:     get("PETAL_ONECLICK_KEY"),
		ReceiverMain:    get("PETAL_RECEIVER_MAINNET"),
		ReceiverTest:    get("PETAL_RECEIVER_TESTNET"),
		PayTestnet:      boolean("PETAL_PAY_TESTNET"),
		NearPriceKeep:   time.Duration(posInt("PETAL_NEAR_PRICE_KEEP_DAYS")) * 24 * time.Hour,

		ToolCallsPerMinute:    posInt("PETAL_TOOL_CALLS_PER_MIN"),
		NewChatsPerHour:       posInt("PETAL_NEW_CHATS_PER_HOUR"),
		FollowUpsPerHour:      posInt("PETAL_FOLLOWUPS_PER_HOUR"),
		FreshReadsAtOnce:      posInt("PETAL_FRESH_READS"),
		FreshReadTimeout:      time.Duration(posInt("PETAL_FRESH_READ_TIMEOUT_S")) * time.Second,
		NearPageSize:          posInt("PETAL_NEAR_PAGE_SIZE"),
		EVMMaxLogs:            posInt("PETAL_EVM_MAX_LOGS"),
		EVMMaxHolders:         posInt("PETAL_EVM_MAX_HOLDERS"),
		RunMax:                time.Duration(posInt("PETAL_RUN_MAX_S")) * time.Second,
		LLMDailyCap:           usd("PETAL_LLM_DAILY_USD"),
		PersonPerChat:         usd("PETAL_PERSON_USD_PER_CHAT"),
		FeeCallBps:            percent("PETAL_FEE_CALL_PERCENT"),
		FeeTopUpBps:           percent("PETAL_FEE_TOPUP_PERCENT"),
		FeePerTurn:            usd("PETAL_FEE_PER_TURN_USD"),
		FeeFreeAllowance:      usd("PETAL_FEE_FREE_ALLOWANCE_USD"),
		PostedSnapshotsPerDay: posInt("PETAL_POSTED_SNAPSHOTS_PER_DAY"),
		PostedPerAddress:      posInt("PETAL_POSTED_SNAPSHOTS_PER_ADDRESS"),
		DataBudgetBytes:       megabytes("PETAL_DATA_BUDGET_MB"),
		LargeDecodes:          posInt("PETAL_LARGE_DECODES"),
		ShutdownDrain:         time.Duration(posInt("PETAL_SHUTDOWN_DRAIN_S")) * time.Second,
		RetainAnon:            time.Duration(nonNegInt("PETAL_RETAIN_ANON_DAYS")) * 24 * time.Hour,
		MapSyncMin:            nonNegInt("PETAL_MAP_SYNC_MIN"),
		MapMarksMin:           nonNegInt("PETAL_MAP_MARKS_MIN"),
		MapRefreshPerDay:      nonNegInt("PETAL_MAP_REFRESH_PER_DAY"),
		RecordedPace:          time.Duration(nonNegInt("PETAL_RECORDED_PACE_MS")) * time.Millisecond,
		Limits:                strings.ToLower(get("PETAL_LIMITS")),
		DBPoolSize:            posInt("PETAL_DB_POOL_SIZE"),
		DBStatementTimeout:    time.Duration(posInt("PETAL_DB_STATEMENT_TIMEOUT_S")) * time.Second,
		BodyTimeout:           time.Duration(posInt("PETAL_BODY_TIMEOUT_S")) * time.Second,
		SSEPerAddress:         posInt("PETAL_SSE_PER_ADDRESS"),
		SearchAPIKey:          get("PETAL_SEARCH_API_KEY"),
		SearchURL:             strings.TrimRight(get("PETAL_SEARCH_URL"), "/"),
		ReadPageLoopback:      boolean("PETAL_READ_PAGE_LOOPBACK"),
		WalletManifest:        get("PETAL_WALLET_MANIFEST"),
		WalletHosts:           endpoints(get("PETAL_WALLET_HOSTS")),
	}
	switch c.Limits {
	case "", LimitsMemory, LimitsPostgres:
	default:
		bad("PETAL_LIMITS", fmt.Sprintf("%q is not memory or postgres", c.Limits))
	}
	if proxies, err := ParseCIDRs(get("PETAL_TRUSTED_PROXIES")); err != nil {
		bad("PETAL_TRUSTED_PROXIES", err.Error())
	} else {
		c.TrustedProxies = proxies
	}
	if tools, err := credit.ParsePerTool(get("PETAL_FEE_PER_TOOL")); err != nil {
		bad("PETAL_FEE_PER_TOOL", err.Error())
	} else {
		c.FeePerTool = tools
	}
	// Anything unrecognised means gated: access is only ever opened on purpose.
	if strings.EqualFold(get("PETAL_AGENT_ACCESS"), "open") {
		c.AgentAccess = "open"
	}
	if _, _, err := net.SplitHostPort(c.Addr); err != nil {
		bad("PETAL_ADDR", fmt.Sprintf("%q is not host:port", c.Addr))
	}
	if c.MetricsAddr != "" {
		if _, port, err := net.SplitHostPort(c.MetricsAddr); err != nil {
			bad("PETAL_METRICS_ADDR", fmt.Sprintf("%q is not host:port", c.MetricsAddr))
		} else if c.MetricsAddr == c.Addr && port != "0" {
			bad("PETAL_METRICS_ADDR", "is PETAL_ADDR; metrics and pprof need a listener of their own, off the public address")
		}
	}
	if c.PublicURL != "" {
		u, err := url.Parse(c.PublicURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad("PETAL_API", fmt.Sprintf("%q is not an http(s) address", c.PublicURL))
		}
	}
	// The share must leave the others something: at the site's cap one
	// address could take every new reading of the day (issue 33 #8).
	if c.PostedPerAddress > 0 && c.PostedSnapshotsPerDay > 0 && c.PostedPerAddress >= c.PostedSnapshotsPerDay {
		bad("PETAL_POSTED_SNAPSHOTS_PER_ADDRESS", fmt.Sprintf("%d is not below PETAL_POSTED_SNAPSHOTS_PER_DAY (%d): one address, or one owner, could take all of the site's new readings of a day; set it lower (at most %d), or raise the day's cap",
			c.PostedPerAddress, c.PostedSnapshotsPerDay, c.PostedSnapshotsPerDay-1))
	}
	if c.ReadPageLoopback && c.Secure() {
		bad("PETAL_READ_PAGE_LOOPBACK", "is for tests only, and PETAL_API is an https:// site: read_page never reads this machine there")
	}
	httpAddress := func(name, raw string) {
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad(name, fmt.Sprintf("%q is not an http(s) address", raw))
		}
	}
	for _, name := range []string{"NEAR_AI_BASE_URL", "PETAL_ONECLICK_URL", "PETAL_SEARCH_URL"} {
		httpAddress(name, get(name))
	}
	for _, rpc := range []struct {
		name string
		list []string
	}{{"PETAL_NEAR_RPC_MAINNET", c.NearRPCMainnet}, {"PETAL_NEAR_RPC_TESTNET", c.NearRPCTestnet}} {
		name, list := rpc.name, rpc.list
		if len(list) == 0 {
			bad(name, fmt.Sprintf("%q names no address", get(name)))
		}
		for _, raw := range list {
			httpAddress(name, raw)
		}
	}
	if c.WalletManifest != "" {
		httpAddress("PETAL_WALLET_MANIFEST", c.WalletManifest)
	}
	// Each host goes into /signin's CSP: an origin and nothing else, so a
	// setting can't carry a keyword or another directive in.
	for _, h := range c.WalletHosts {
		u, err := url.Parse(h)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil ||
			(u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(u.Host, " ;'*") {
			bad("PETAL_WALLET_HOSTS", fmt.Sprintf("%q is not an origin (scheme://host[:port])", h))
		}
	}
	if c.BlobURL != "" && c.BlobURL != BlobsOff {
		if u, err := url.Parse(c.BlobURL); err != nil || u.Scheme == "" {
			bad("PETAL_BLOB_URL", fmt.Sprintf("%q is not a bucket URL (file:///abs/dir, s3://bucket?region=…) or off", c.BlobURL))
		} else if u.Scheme == "mem" {
			// Rows would name bodies the next start no longer has.
			bad("PETAL_BLOB_URL", "mem:// forgets every body when the process ends; use file://, s3:// or another store")
		}
	}
	switch c.LogFormat {
	case "", "json", "text":
	default:
		bad("PETAL_LOG_FORMAT", fmt.Sprintf("%q is not json or text", c.LogFormat))
	}
	c.EVMRPC = evmEndpoints(get, bad)
	if c.NearUSD != "" {
		if m, err := credit.ParseUSD(c.NearUSD); err != nil || m <= 0 {
			bad("PETAL_NEAR_USD", fmt.Sprintf("%q is not a positive dollar amount", c.NearUSD))
		}
	}
	for _, network := range []string{"mainnet", "testnet"} {
		if account := c.Receiver(network); !people.ValidAccountID(account) {
			bad(ReceiverVariable(network), fmt.Sprintf("%q is not a NEAR account id", account))
		}
	}
	if c.Public {
		// A public site never loads the model key (contract, Public mode).
		c.ModelKey = ""
	}
	if len(problems) > 0 {
		return c, fmt.Errorf("bad configuration: %s", strings.Join(problems, "; "))
	}
	return c, nil
}

// endpoints splits a comma list of addresses, dropping blanks, keeping the
// order (the first is tried first).
func endpoints(list string) []string {
	var out []string
	for part := range strings.SplitSeq(list, ",") {
		if part = strings.TrimSpace(part); part != "" {
			out = append(out, part)
		}
	}
	return out
}

// Getenv is what the petal commands read their configuration through:
// os.Getenv, and for PETAL_EVM_CHAINS also the id of every
// PETAL_EVM_RPC_<chain id> set in the environment, so a chain with endpoints
// set is read without being listed (LoadConfig alone only reads variables
// by name).
func Getenv(name string) string {
	v := os.Getenv(name)
	if name != "PETAL_EVM_CHAINS" {
		return v
	}
	ids := []string{}
	if strings.TrimSpace(v) != "" {
		ids = append(ids, v)
	}
	for _, kv := range os.Environ() {
		key, _, _ := strings.Cut(kv, "=")
		if id, ok := strings.CutPrefix(key, "PETAL_EVM_RPC_"); ok {
			if _, err := strconv.ParseUint(id, 10, 64); err == nil {
				ids = append(ids, id)
			}
		}
	}
	return strings.Join(ids, ",")
}

// KnownEVMChains are the chain ids with a variable of their own
// (PETAL_EVM_RPC_<id>); PETAL_EVM_CHAINS names any other.
var KnownEVMChains = []uint64{1, 10, 100, 8453, 42161}

// evmEndpoints reads PETAL_EVM_RPC_<id> for the known chains and those
// PETAL_EVM_CHAINS names: only chains with endpoints are kept.
func evmEndpoints(get func(string) string, bad func(name, why string)) map[uint64][]string {
	ids := slices.Clone(KnownEVMChains)
	if extra := get("PETAL_EVM_CHAINS"); extra != "" {
		for _, f := range strings.Split(extra, ",") {
			id, err := strconv.ParseUint(strings.TrimSpace(f), 10, 64)
			if err != nil || id == 0 {
				bad("PETAL_EVM_CHAINS", fmt.Sprintf("%q is not a chain id (a positive whole number)", strings.TrimSpace(f)))
				continue
			}
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	out := map[uint64][]string{}
	for _, id := range ids {
		name := fmt.Sprintf("PETAL_EVM_RPC_%d", id)
		var urls []string
		for _, f := range strings.Split(get(name), ",") {
			if f = strings.TrimSpace(f); f == "" {
				continue
			}
			if u, err := url.Parse(f); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				bad(name, "an endpoint is not an http(s) URL")
				continue
			}
			urls = append(urls, f)
		}
		if len(urls) > 0 {
			out[id] = urls
		}
	}
	return out
}
