package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	httpapi "github.com/petal-near/petal/adapters/http"
	"github.com/petal-near/petal/adapters/metrics"
	"github.com/petal-near/petal/adapters/nearai"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/recorded"
	"github.com/petal-near/petal/adapters/tracing"
	"github.com/petal-near/petal/app/agentapp"
	"github.com/petal-near/petal/app/agentjobsapp"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/app/mapsapp"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/app/relationsapp"
	"github.com/petal-near/petal/app/siteapp"
	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/ports"
)

// service is the wired HTTP door with the background jobs a serving process
// runs beside it: the process lease, the event bus listener, the recovery
// of runs whose process is gone and the scheduled jobs (one replica at a time).
type service struct {
	Server    *httpapi.Server
	Registry  *toolkit.Registry // every tool; tests hold the doors to it
	Agent     *agentapp.AgentService
	Snapshots *snapshotsapp.SnapshotService
	Bus       *postgres.EventBus
	Leases    ports.Leases
	Process   jobsapp.ProcessID
	Ledger    *moneyapp.Ledger
	Jobs      *jobsapp.Scheduler
	// Near reads the chain; serve checks the receivers with it at start.
	Near ports.NearAccounts
	// Maps is the shared map; MapListener tells it of every replica's new
	// flowers, and MapSync brings in flowers published elsewhere.
	Cfg         config.Config
	Maps        *mapsapp.MapService
	MapListener *postgres.Listener
	MapSync     *mapsapp.MapSync
	// Marks reads the maps' marks (the map_marks job).
	Marks *mapsapp.MarkReader
	// Relations is the relations index and its tools.
	Relations *relationsapp.RelationService
	Log       *slog.Logger
	// Metrics is every metric declared; serve answers them on
	// PETAL_METRICS_ADDR.
	Metrics *metrics.Registry
}

// start stores the snapshots shipped inside petal, takes this process's
// lease, listens on the event bus, ends the runs of processes that are gone,
// and keeps the lease beating until ctx ends. The
// returned stop ends this process's runs as interrupted and gives the lease
// back. Only serving does this: building the app (a test, migrate) touches
// no run.
func (s *service) start(ctx context.Context) (stop func(), err error) {
	s.Snapshots.StoreShipped(ctx)
	host, _ := os.Hostname()
	p := ports.Process{ID: string(s.Process), Hostname: host, PID: os.Getpid(), BuildID: toolkit.BuildID}
	if err := s.Leases.Register(ctx, p); err != nil {
		return nil, fmt.Errorf("taking the process lease: %w", err)
	}
	s.Agent.Start()
	jobs, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { _ = s.Bus.Run(jobs) })
	wg.Go(func() { _ = s.MapListener.Run(jobs) })
	wg.Go(func() { jobsapp.KeepLease(jobs, s.Leases, p, s.Agent, s.Log) })
	select {
	case <-s.Bus.Ready():
	case <-time.After(10 * time.Second):
		cancel()
		wg.Wait()
		return nil, errors.New("the event bus could not listen within 10 s")
	case <-ctx.Done():
		cancel()
		wg.Wait()
		return nil, ctx.Err()
	}
	if _, err := s.Agent.Recover(ctx); err != nil {
		s.Log.Error("recovering runs of processes that are gone", "err", err)
	}
	// After the runs: every hold of a process that is gone goes back.
	if _, err := s.Ledger.ReleaseOrphanHolds(ctx); err != nil {
		s.Log.Error("releasing the ledger holds of processes that are gone", "err", err)
	}
	if s.Cfg.Public {
		// A public site's map is the rows it ships: kept before serving, read
		// from no chain.
		if _, err := s.MapSync.Run(ctx); err != nil {
			s.Log.Error("keeping the shipped map rows", "err", err)
		}
	}
	wg.Go(func() { s.Jobs.Run(jobs) })
	return func() {
		sctx, scancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer scancel()
		s.Agent.Shutdown(sctx)
		cancel()
		wg.Wait()
		if err := s.Leases.Remove(sctx, string(s.Process)); err != nil {
			s.Log.Warn("giving the process lease back", "err", err)
		}
	}, nil
}

// newScheduler is this process's scheduler with every scheduled job petal
// runs; each runs on one replica at a time (app.Scheduler). Add a job here.
func newScheduler(leases ports.JobLeases, process jobsapp.ProcessID, log *slog.Logger, m ports.Metrics, agent *agentapp.AgentService, ledger *moneyapp.Ledger, cfg config.Config, db *postgres.DB, clock ports.Clock,
	prices *moneyapp.NearPrices, retention ports.Retention, topUps *moneyapp.TopUpService, mapSync *mapsapp.MapSync,
	agentJobs *agentjobsapp.AgentJobsService, relations *relationsapp.RelationService, random ports.Random, marks *mapsapp.MarkReader, ledgerStore *postgres.LedgerRepository, blobs ports.Blobs,
	refresher *mapsapp.MapRefresher) *jobsapp.Scheduler {
	s := jobsapp.NewScheduler(leases, process, log)
	s.JitterFrom(random)
	s.Observe(jobsapp.CountJobs(m))
	s.Add(agentapp.SweepJob(agent, ledger, m))
	s.Add(siteapp.RetentionJob(retention, cfg, m))
	s.Add(moneyapp.DaySlicesJob(ledgerStore, clock))
	if cfg.Limits != config.LimitsMemory {
		// Closed windows of the limits counted in PostgreSQL (newRateLimiter).
		s.Add(jobsapp.Job{Name: "rate_limit_windows", Every: time.Minute, Deadline: 30 * time.Second,
			Run: func(ctx context.Context) (int64, error) { return postgres.SweepClosedWindows(ctx, db, clock.Now()) }})
	}
	s.Add(prices.Job())
	s.Add(topUps.Job())
	if j := mapSync.Job(); j != nil && !cfg.Public {
		s.Add(*j)
	}
	s.Add(agentJobs.SweepJob())
	if blobs != nil {
		// Rows written before the blob store was set still hold their
		// bodies: moved out a batch at a time (docs/operations.md).
		s.Add(siteapp.MoveBodiesJob(postgres.NewBodyMover(db, blobs), m))
		// A row deleted leaves its blob behind; swept once no row has
		// named it for an hour.
		s.Add(siteapp.DeleteBlobsJob(postgres.NewBlobSweeper(db, blobs), m))
	}
	s.Add(relations.Job())
	if j := marks.Job(); j != nil && !cfg.Public {
		// A public site reads nothing from outside: its cards carry the
		// marks its database holds.
		s.Add(*j)
	}
	if j := refresher.Job(); j != nil {
		// Nil on a public site, which reads no chain.
		s.Add(*j)
	}
	return s
}

// newRunStore is the run store, its appends notifying through this
// process's bus.
func newRunStore(db *postgres.DB, bus *postgres.EventBus, m ports.Metrics) *postgres.RunRepository {
	return postgres.NewRunRepository(db).PublishingThrough(bus).ObservedBy(m)
}

// newModelProvider is NEAR AI with a model key, the recorded conversation
// without one (and always on a public site, which never loads the key).
// NEAR AI's counts of what it was sent are kept in PostgreSQL, so every
// replica holds a call at what any has seen counted.
func newModelProvider(cfg config.Config, attest ports.Attestations, counts ports.PromptCounts, m ports.Metrics, log *slog.Logger, t *tracing.Tracing) (ports.ModelProvider, error) {
	if cfg.ModelKey == "" {
		return recorded.New(cfg.RecordedPace), nil
	}
	c, err := nearai.New(nearai.Options{BaseURL: cfg.ModelBaseURL, Key: cfg.ModelKey, Model: cfg.Model, Fallback: cfg.FallbackModel,
		HTTP: &http.Client{Timeout: 120 * time.Second, Transport: t.Transport()}, Metrics: m, Counts: counts, Log: log}, attest)
	if err != nil {
		return nil, fmt.Errorf("NEAR_AI_MODEL / NEAR_AI_FALLBACK_MODEL: %w", err)
	}
	return c, nil
}
