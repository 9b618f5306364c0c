package main

import (
	"context"
	"crypto/rand"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/wire"

	"github.com/petal-near/petal/adapters/brave"
	"github.com/petal-near/petal/adapters/evm"
	"github.com/petal-near/petal/adapters/fastnear"
	httpapi "github.com/petal-near/petal/adapters/http"
	mcpdoor "github.com/petal-near/petal/adapters/mcp"
	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/metrics"
	"github.com/petal-near/petal/adapters/nearrpc"
	"github.com/petal-near/petal/adapters/oneclick"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/tracing"
	"github.com/petal-near/petal/adapters/webpage"
	"github.com/petal-near/petal/app/agentapp"
	"github.com/petal-near/petal/app/agentjobsapp"
	"github.com/petal-near/petal/app/annotationsapp"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/explorationsapp"
	"github.com/petal-near/petal/app/eyesapp"
	"github.com/petal-near/petal/app/flowersapp"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/mapsapp"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/app/peopleapp"
	"github.com/petal-near/petal/app/publishapp"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/app/viewsapp"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// Provider sets, one per layer, that wire.go composes.
var (
	adapterSet = wire.NewSet(
		newTracing,
		newClock,
		newMetrics,
		wire.Bind(new(ports.Metrics), new(*metrics.Registry)),
		newRateLimiter,
		newSemaphore,
		newRandom,
		newRunStore,
		wire.Bind(new(ports.RunStore), new(*postgres.RunRepository)),
		newEventBus,
		wire.Bind(new(ports.EventBus), new(*postgres.EventBus)),
		wire.Bind(new(ports.Signals), new(*postgres.EventBus)),
		postgres.NewAgentJobRepository,
		wire.Bind(new(ports.AgentJobs), new(*postgres.AgentJobRepository)),
		newPool,
		newBlobs,
		newLeases,
		wire.Bind(new(ports.Leases), new(*postgres.Leases)),
		postgres.NewJobLeases,
		postgres.NewRetention,
		wire.Bind(new(ports.Retention), new(*postgres.Retention)),
		wire.Bind(new(ports.Opens), new(*postgres.Retention)),
		wire.Bind(new(ports.JobLeases), new(*postgres.JobLeases)),
		postgres.NewJobPositionRepository,
		wire.Bind(new(ports.JobPositions), new(*postgres.JobPositionRepository)),
		newMapMarkRepository,
		wire.Bind(new(ports.MapMarks), new(*postgres.MapMarkRepository)),
		postgres.NewMapRefreshRepository,
		wire.Bind(new(ports.MapRefresh), new(*postgres.MapRefreshRepository)),
		postgres.NewAttestations,
		wire.Bind(new(ports.Attestations), new(*postgres.Attestations)),
		newModelProvider,
		postgres.NewPromptCountRepository,
		wire.Bind(new(ports.PromptCounts), new(*postgres.PromptCountRepository)),
		postgres.NewSessionRepository,
		wire.Bind(new(ports.SessionStore), new(*postgres.SessionRepository)),
		postgres.NewInviteRepository,
		wire.Bind(new(ports.InviteStore), new(*postgres.InviteRepository)),
		newLedgerRepository,
		wire.Bind(new(ports.LedgerStore), new(*postgres.LedgerRepository)),
		postgres.NewBillingClaimRepository,
		wire.Bind(new(ports.BillingClaims), new(*postgres.BillingClaimRepository)),
		postgres.NewNearPriceRepository,
		wire.Bind(new(ports.NearPriceHistory), new(*postgres.NearPriceRepository)),
		postgres.NewPeopleRepository,
		wire.Bind(new(ports.PeopleStore), new(*postgres.PeopleRepository)),
		wire.Bind(new(ports.NearAccounts), new(*nearrpc.Client)),
		newNearPrice,
		newSwaps,
		wire.Bind(new(ports.Swaps), new(*oneclick.Swaps)),
		postgres.NewChatQuoteRepository,
		wire.Bind(new(ports.ChatQuotes), new(*postgres.ChatQuoteRepository)),
		postgres.NewIntentTopUpRepository,
		wire.Bind(new(ports.IntentTopUps), new(*postgres.IntentTopUpRepository)),
		newModelBilling,
		newModelPrices,
		newSnapshotRepository,
		newSnapshotLinks,
		wire.Bind(new(ports.SnapshotStore), new(*postgres.SnapshotRepository)),
		postgres.NewExplorationRepository,
		wire.Bind(new(ports.ExplorationStore), new(*postgres.ExplorationRepository)),
		postgres.NewAnnotationRepository,
		wire.Bind(new(ports.AnnotationStore), new(*postgres.AnnotationRepository)),
		postgres.NewConversationRepository,
		wire.Bind(new(ports.Conversations), new(*postgres.ConversationRepository)),
		postgres.NewLayerRepository,
		wire.Bind(new(ports.LayerStore), new(*postgres.LayerRepository)),
		postgres.NewDataBudgetRepository,
		wire.Bind(new(ports.DataBudget), new(*postgres.DataBudgetRepository)),
		postgres.NewSpecRepository,
		wire.Bind(new(ports.SpecStore), new(*postgres.SpecRepository)),
		postgres.NewViewRepository,
		wire.Bind(new(ports.ViewStore), new(*postgres.ViewRepository)),
		postgres.NewPublishedFlowerRepository,
		wire.Bind(new(mapsapp.MapFlowerStore), new(*postgres.PublishedFlowerRepository)),
		postgres.NewFlowerCorrectionRepository,
		wire.Bind(new(ports.FlowerCorrections), new(*postgres.FlowerCorrectionRepository)),
		newPublishedFlowers,
		postgres.NewRelationRepository,
		wire.Bind(new(ports.RelationStore), new(*postgres.RelationRepository)),
		postgres.NewSearchRepository,
		wire.Bind(new(ports.SearchStore), new(*postgres.SearchRepository)),
		wire.Bind(new(ports.SocialDB), new(*nearrpc.Client)),
		newProfileRepository,
		wire.Bind(new(ports.ProfileStore), new(*postgres.ProfileRepository)),
		newChain,
		wire.Bind(new(ports.NearContracts), new(*nearrpc.Client)),
		newEVM,
		wire.Bind(new(ports.EVMTokens), new(*evm.Client)),
		newFastNEAR,
		wire.Bind(new(ports.FTHolderIndex), new(*fastnear.Client)),
		postgres.NewDAODirectoryRepository,
		wire.Bind(new(ports.DAODirectory), new(*postgres.DAODirectoryRepository)),
		wire.Bind(new(ports.NearViews), new(*nearrpc.Client)),
		newWebPages,
		newWebSearch,
	)
	// registrySet is every tool; the stdio MCP door needs only this.
	registrySet = wire.NewSet(
		snapshotsapp.NewDataBudget,
		explorationsapp.NewExplorationService,
		snapshotsapp.NewSnapshotLibrary,
		viewsapp.NewViewService,
		wire.Bind(new(viewsapp.PersonViews), new(*viewsapp.ViewService)),
		flowersapp.NewFlowerService,
		// The map is here so every door's store of published flowers tells it
		// of what is kept (newPublishedFlowers).
		newMapService,
		relationsapp.NewRelationService,
		relationsapp.NewSearchService,
		relationsapp.NewLookUpService,
		annotationsapp.NewAnnotationService,
		annotationsapp.NewLayerService,
		newSnapshotService,
		jobsapp.NewProcessID,
		newAgentJobsService,
		eyesapp.NewEyesService,
		eyesapp.NewBrainService,
		publishapp.NewPublishService,
		toolSets,
		toolkit.NewRegistry,
	)
	appSet = wire.NewSet(
		siteapp.NewHealthService,
		peopleapp.NewSessionService,
		moneyapp.NewInviteService,
		moneyapp.NewAccess,
		moneyapp.NewLedger,
		peopleapp.NewWalletKeys,
		peopleapp.NewSignInService,
		newSiteClaims,
		wire.Bind(new(annotationsapp.WalletReader), new(*peopleapp.SignInService)),
		moneyapp.NewPayService,
		moneyapp.NewTopUpService,
		peopleapp.NewProfileService,
		moneyapp.NewNearPrices,
		newMapSync,
		mapsapp.NewMarkReader,
		newMapRefresher,
		newFlowerListener,
		wire.Struct(new(agentapp.AgentDeps), "*"),
		newAgentService,
		agentapp.NewConversationService,
		wire.Bind(new(agentapp.FlowerDrawer), new(*flowersapp.FlowerService)),
		registrySet,
	)
	mcpSet = wire.NewSet(
		mcpdoor.New,
	)
	httpSet = wire.NewSet(
		newTracedDoor,
		wire.Struct(new(httpapi.Deps), "*"),
		newWalletConnector,
		httpapi.New,
	)
	serverSet = wire.NewSet(adapterSet, appSet, mcpSet, httpSet, newScheduler,
		wire.Struct(new(service), "*"),
		wire.Bind(new(httpapi.MCPDoor), new(*mcpdoor.Server)))
	// databaseBinding is the pool (newPool's) as the health check's database.
	databaseBinding = wire.Bind(new(ports.Database), new(*postgres.DB))
)

func newClock() ports.Clock { return memory.SystemClock{} }

// newTracing is OpenTelemetry's traces when the SDK's variables name an OTLP
// endpoint (adapters/tracing), else off; its cleanup flushes the spans
// batched.
func newTracing(log *slog.Logger) (*tracing.Tracing, func(), error) {
	t, err := tracing.Start(context.Background(), os.Getenv, toolkit.BuildID)
	if err != nil {
		return nil, nil, err
	}
	return t, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := t.Shutdown(ctx); err != nil {
			log.Warn("tracing: flushing the last spans", "err", err)
		}
	}, nil
}

// newTracedDoor wraps the HTTP door in a server span per request, when
// tracing is on.
func newTracedDoor(t *tracing.Tracing) httpapi.HandlerWrap {
	if !t.On() {
		return nil
	}
	return t.Handler
}

// newMapSync is the map's SocialDB sync: over the chain, or on a public site
// over the copies of SocialDB's answers that ship inside petal, so the map
// answers with no chain read.
// newPublishedFlowers is the published flowers' store as every writer uses
// it: what is kept through it is on this process's map at once.
func newPublishedFlowers(store *postgres.PublishedFlowerRepository, maps *mapsapp.MapService, relations *relationsapp.RelationService) ports.PublishedFlowers {
	return relationsapp.IndexingKeeps(maps.Watching(store), relations)
}

// newMapService is the map, its /map answer carrying the relations' groups
// and pairs, its cards the maps' marks.
func newMapService(cfg config.Config, library *snapshotsapp.SnapshotLibrary, store mapsapp.MapFlowerStore, views viewsapp.PersonViews, clock ports.Clock,
	log *slog.Logger, m ports.Metrics, relations *relationsapp.RelationService, marks ports.MapMarks) (*mapsapp.MapService, error) {
	return mapsapp.NewMapService(cfg, library, store, views, relations, marks, clock, log, m)
}

func newMapSync(cfg config.Config, chain *nearrpc.Client, flowers ports.PublishedFlowers, corrections ports.FlowerCorrections, positions ports.JobPositions, library *snapshotsapp.SnapshotLibrary,
	log *slog.Logger, m ports.Metrics) (*mapsapp.MapSync, error) {
	var social ports.SocialDB = chain
	if cfg.Public {
		shipped, err := nearrpc.NewShippedSocialDB(mapsapp.ShippedMapRows())
		if err != nil {
			return nil, err
		}
		social = shipped
	}
	return mapsapp.NewMapSync(cfg, social, flowers, corrections, positions, library, log, m), nil
}

// newMapRefresher is the map_refresh job, reading through this site's
// readers and keeping its readings in the snapshot store.
func newMapRefresher(cfg config.Config, store ports.MapRefresh, mapService *mapsapp.MapService, snaps *snapshotsapp.SnapshotService,
	library *snapshotsapp.SnapshotLibrary, chain ports.NearViews, clock ports.Clock, log *slog.Logger, m ports.Metrics) *mapsapp.MapRefresher {
	return mapsapp.NewMapRefresher(cfg, store, mapService, snaps, library.Store(), chain, clock, log, m)
}

// newFlowerListener hears every replica's newly kept flowers (NOTIFY on
// ports.FlowersChannel) for this process's map; after a reconnect the map
// reads the whole store again, since notifications may have been missed.
func newFlowerListener(db *postgres.DB, log *slog.Logger, maps *mapsapp.MapService) *postgres.Listener {
	l := postgres.NewListener(db, log, ports.FlowersChannel)
	l.On(func(payload string) {
		id, _, _ := strings.Cut(payload, " ")
		if id == ports.RefreshedPayload {
			maps.HeardRefreshed()
			return
		}
		maps.Heard(id)
	}, func() {
		maps.Reset()
		maps.RefreshSoon()
	})
	return l
}

// newMetrics is the registry every component declares its metrics on (served
// on PETAL_METRICS_ADDR when set), with the database's own.
func newMetrics(db *postgres.DB) *metrics.Registry {
	m := metrics.New()
	db.Observe(m)
	return m
}

// newRateLimiter counts per-address limits shared by every process on the
// database, or in this process's memory (cfg.Limits, decided by serve from
// PETAL_LIMITS and the database found). The shared one counts each key in
// memory up to this replica's share of its limit and asks PostgreSQL only
// for a key that needs more (postgres.ShareLimiter); it beats its lease
// every second, from a first beat before serving, and gives it up at
// shutdown (its cleanup, before the pool closes).
func newRateLimiter(cfg config.Config, db *postgres.DB, clock ports.Clock, m ports.Metrics, log *slog.Logger) (ports.RateLimiter, func()) {
	if cfg.Limits == config.LimitsMemory {
		return toolkit.CountedRateLimiter(memory.NewRateLimiter(clock), m), func() {}
	}
	opts := postgres.DefaultShareOptions
	opts.Metrics = m
	shared := postgres.NewShareLimiter(db, clock, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	if err := shared.Heartbeat(ctx); err != nil {
		log.Warn("the rate limiter's first heartbeat failed; every check asks the database until one lands", "err", err)
	}
	cancel()
	stop := shared.Beat(func(err error) {
		log.Warn("rate limiter heartbeat failed; past its lease this replica counts only in the database", "err", err)
	})
	return toolkit.CountedRateLimiter(shared, m), func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		stop(ctx)
	}
}

// newSemaphore holds the fresh-read slots where newRateLimiter counts.
func newSemaphore(cfg config.Config, db *postgres.DB, clock ports.Clock) ports.Semaphore {
	if cfg.Limits == config.LimitsMemory {
		return memory.NewSemaphore(clock)
	}
	return postgres.NewSemaphore(db, clock)
}

// newChain is the NEAR RPC client over the configured endpoints (each
// network's in the order given, failing over).
func newChain(cfg config.Config, m ports.Metrics, t *tracing.Tracing) *nearrpc.Client {
	return nearrpc.New(nearrpc.Options{Endpoints: map[string][]string{
		snapshots.Mainnet: cfg.NearRPCMainnet,
		snapshots.Testnet: cfg.NearRPCTestnet,
	}, PageSize: cfg.NearPageSize, Metrics: m, HTTPClient: &http.Client{Transport: t.Transport()}})
}

// newEVM is the EVM chains' client over their configured endpoints
// (PETAL_EVM_RPC_<id>); with none set it reads no chain.
func newEVM(cfg config.Config, m ports.Metrics, t *tracing.Tracing) (*evm.Client, func(), error) {
	c, err := evm.New(evm.Options{Endpoints: cfg.EVMRPC, Metrics: m, HTTPClient: &http.Client{Transport: t.Transport()}})
	if err != nil {
		return nil, nil, err
	}
	return c, c.Close, nil
}

// newFastNEAR is FastNEAR's API, near-ft-holders' index of a token's holders.
func newFastNEAR(cfg config.Config, m ports.Metrics, t *tracing.Tracing) *fastnear.Client {
	return fastnear.New(fastnear.Options{Bases: map[string]string{
		snapshots.Mainnet: cfg.FastNEARMainnet,
		snapshots.Testnet: cfg.FastNEARTestnet,
	}, Metrics: m, HTTPClient: &http.Client{Transport: t.Transport()}})
}

func newRandom() ports.Random { return rand.Reader }

// toolSets lists every service that brings tools to the registry.
func toolSets(agentJobs *agentjobsapp.AgentJobsService, explorations *explorationsapp.ExplorationService, flowers *flowersapp.FlowerService, snapshots *snapshotsapp.SnapshotService,
	annotations *annotationsapp.AnnotationService, layers *annotationsapp.LayerService, eyes *eyesapp.EyesService, brain *eyesapp.BrainService, publish *publishapp.PublishService,
	relations *relationsapp.RelationService, search *relationsapp.SearchService, lookUp *relationsapp.LookUpService) []toolkit.ToolSet {
	return []toolkit.ToolSet{explorations, flowers, snapshots, annotations, layers, eyes, brain, publish, agentJobs, relations, search, lookUp}
}

// newWebPages is read_page's fetcher: public pages only (loopback too with
// PETAL_READ_PAGE_LOOPBACK, which LoadConfig refuses on an https site).
func newWebPages(cfg config.Config, m ports.Metrics) ports.WebPages {
	return webpage.New(webpage.Options{AllowLoopback: cfg.ReadPageLoopback, Metrics: m})
}

// newWebSearch is search's provider, the Brave Search API; without
// PETAL_SEARCH_API_KEY it is unconfigured and asks nothing.
func newWebSearch(cfg config.Config, m ports.Metrics) ports.WebSearch {
	return brave.New(cfg.SearchURL, cfg.SearchAPIKey, m)
}

// noWallets is the stdio MCP door's: it has no sessions, so no wallet ever
// answers for a claim there.
func noWallets() annotationsapp.WalletReader { return nil }

// newNearPrice is the NEAR price: PETAL_NEAR_USD when set (LoadConfig has
// checked it), else NEAR Intents' token list (null when it can't be read).
func newNearPrice(cfg config.Config, log *slog.Logger, t *tracing.Tracing) ports.NearPrice {
	if cfg.NearUSD != "" {
		p, _ := credit.ParseUSD(cfg.NearUSD)
		return memory.FixedNearPrice{Price: p}
	}
	return oneclick.NewPriceFeed(cfg.OneClickURL, &http.Client{Timeout: oneclick.PriceTimeout, Transport: t.Transport()}).LoggingTo(log)
}

// newSwaps is NEAR Intents' 1Click swap API (top-ups from any token).
func newSwaps(cfg config.Config, m ports.Metrics, t *tracing.Tracing) *oneclick.Swaps {
	return oneclick.NewSwaps(cfg.OneClickURL, cfg.OneClickKey, &http.Client{Timeout: oneclick.QuoteTimeout, Transport: t.Transport()}, m)
}

// newModelBilling is the model provider's bills, when it sends them (NEAR AI
// does; the recorded model doesn't).
func newModelBilling(p ports.ModelProvider) ports.ModelBilling {
	if b, ok := p.(ports.ModelBilling); ok {
		return b
	}
	return nil
}

// newModelPrices is where the model provider's prices come from, when it
// reads them from its own list (NEAR AI does; the recorded model costs nothing).
func newModelPrices(p ports.ModelProvider) ports.ModelPrices {
	if m, ok := p.(ports.ModelPrices); ok {
		return m
	}
	return nil
}

// newEventBus is the event bus, observed.
func newEventBus(db *postgres.DB, log *slog.Logger, m ports.Metrics) *postgres.EventBus {
	return postgres.NewEventBus(db, log).ObservedBy(m)
}

// newLedgerRepository is the ledger store, observed.
func newLedgerRepository(db *postgres.DB, m ports.Metrics) *postgres.LedgerRepository {
	return postgres.NewLedgerRepository(db).ObservedBy(m)
}

// newSnapshotService is the snapshot service, observed.
func newSnapshotService(cfg config.Config, log *slog.Logger, library *snapshotsapp.SnapshotLibrary, daos ports.DAODirectory,
	near ports.NearContracts, evm ports.EVMTokens, ftIndex ports.FTHolderIndex, clock ports.Clock, slots ports.Semaphore, m ports.Metrics) *snapshotsapp.SnapshotService {
	return snapshotsapp.NewSnapshotService(cfg, log, library, daos, near, clock, slots).WithEVM(evm).WithFTHolderIndex(ftIndex).ObservedBy(m)
}

// newAgentService is Petals' agent, which also takes up the reports the
// person's own agents bring back, its rounds and tool calls traced when
// tracing is on.
func newAgentService(d agentapp.AgentDeps, jobs *agentjobsapp.AgentJobsService, t *tracing.Tracing, maps *mapsapp.MapService) *agentapp.AgentService {
	a := agentapp.NewAgentService(d)
	a.TraceWith(t.Provider())
	jobs.SetTurns(a)
	a.SetJobNotes(jobs)
	a.SetEarlierReadings(maps)
	return a
}

// newSiteClaims is the site's own claims, finding each map's accounts through
// the map; it also has the map draw a person's names (annotations) on their
// own pictures.
func newSiteClaims(m *mapsapp.MapService, a *annotationsapp.AnnotationService) (*relationsapp.SiteClaims, error) {
	m.DrawNamesFrom(a)
	c, err := relationsapp.NewSiteClaims()
	if err != nil {
		return nil, err
	}
	c.ReadMapsFrom(m)
	return c, nil
}

// newAgentJobsService is a person's agents' jobs, which also watch the
// explorations' links (a worker's own is refused once its job ended) and
// changes (the live signal).
func newAgentJobsService(cfg config.Config, store ports.AgentJobs, exps ports.ExplorationStore, runStore ports.RunStore, signals ports.Signals,
	views viewsapp.PersonViews, clock ports.Clock, random ports.Random, process jobsapp.ProcessID, m ports.Metrics, log *slog.Logger,
	explorationService *explorationsapp.ExplorationService) *agentjobsapp.AgentJobsService {
	s := agentjobsapp.NewAgentJobsService(cfg, store, exps, runStore, signals, views, clock, random, process, m, log)
	explorationService.Watch(s)
	return s
}

// newWalletConnector is /signin's wallet list: PETAL_WALLET_MANIFEST and
// PETAL_WALLET_HOSTS (app/config, docs/pages.md).
func newWalletConnector(cfg config.Config) httpapi.WalletConnector {
	return httpapi.WalletConnector{ManifestURL: cfg.WalletManifest, Hosts: cfg.WalletHostsOrDefault(httpapi.DefaultWalletHosts)}
}
