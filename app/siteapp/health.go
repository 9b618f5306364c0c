package siteapp

import (
	"context"
	"sync"
	"time"

	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// Health is what GET /api/v1/health answers.
type Health struct {
	OK  bool   `json:"ok"`
	DB  string `json:"db"`
	Map string `json:"map"`
	// MapCheckedAt is when map was last checked (absent while it never was,
	// and on a public site, which holds its map).
	MapCheckedAt *time.Time `json:"map_checked_at,omitempty"`
	LLM          string     `json:"llm"`
	AgentAccess  string     `json:"agent_access"`
	Public       bool       `json:"public"`
	BuildID      string     `json:"build_id"`
}

// The map's states in Health.Map.
const (
	MapUp      = "up"      // NEAR's RPC answered the last check: live reads work
	MapDown    = "down"    // the last check failed: live reads would answer source_failed
	MapUnknown = "unknown" // no check has finished yet
	MapHeld    = "held"    // a public site draws from the copies it ships, never a live read
)

// mapCheckEvery is how old the map's last check may be before health starts
// another (in the background). Readiness probes come every few seconds from
// every replica; NEAR's RPC sees one check per replica per interval.
const mapCheckEvery = 30 * time.Second

// mapCheckTimeout bounds one check of NEAR's RPC.
const mapCheckTimeout = 5 * time.Second

// mapFirstWait is how long the first health answer waits for the first check,
// so a fresh process usually reports a real state rather than unknown.
const mapFirstWait = 2 * time.Second

// HealthService reports whether petal can serve.
type HealthService struct {
	cfg  config.Config
	db   ports.Database
	near ports.NearContracts

	mu        sync.Mutex
	mapState  string
	checkedAt time.Time
	checking  chan struct{} // open while a check runs
}

// NewHealthService makes the health check over the database and the chain the
// map is read from.
func NewHealthService(cfg config.Config, db ports.Database, near ports.NearContracts) *HealthService {
	return &HealthService{cfg: cfg, db: db, near: near, mapState: MapUnknown}
}

// Check pings the database, and reports the map's last check. Only the
// database decides ok: the process keeps serving when it does not answer (the
// pool reconnects by itself when it comes back), and a chain that does not
// answer makes live reads fail, not the whole site.
func (h *HealthService) Check(ctx context.Context) Health {
	out := Health{
		OK:          true,
		DB:          "up",
		LLM:         h.cfg.LLM(),
		AgentAccess: h.cfg.AgentAccessReported(),
		Public:      h.cfg.Public,
		BuildID:     toolkit.BuildID,
	}
	if h.cfg.Public {
		out.Map = MapHeld
	} else {
		state, at := h.mapStatus(ctx)
		out.Map = state
		if !at.IsZero() {
			out.MapCheckedAt = &at
		}
	}
	if err := h.db.Ping(ctx); err != nil {
		out.OK = false
		out.DB = "down"
	}
	return out
}

// mapStatus is the last check's result. A stale one starts a new check in the
// background: a health answer never waits on NEAR, except the very first,
// which waits up to mapFirstWait.
func (h *HealthService) mapStatus(ctx context.Context) (string, time.Time) {
	h.mu.Lock()
	stale := time.Since(h.checkedAt) >= mapCheckEvery
	if stale && h.checking == nil {
		h.checking = make(chan struct{})
		go h.checkMap(h.checking)
	}
	first, checking := h.checkedAt.IsZero(), h.checking
	h.mu.Unlock()
	if first && checking != nil {
		select {
		case <-checking:
		case <-time.After(mapFirstWait):
		case <-ctx.Done():
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.mapState, h.checkedAt
}

// checkMap pins a reading of mainnet at its final block, the first call of
// every live reading of the map (nothing else is read).
func (h *HealthService) checkMap(done chan struct{}) {
	ctx, cancel := context.WithTimeout(context.Background(), mapCheckTimeout)
	defer cancel()
	_, err := h.near.Pin(ctx, snapshots.Mainnet)
	h.mu.Lock()
	defer h.mu.Unlock()
	h.mapState = MapUp
	if err != nil {
		h.mapState = MapDown
	}
	h.checkedAt = time.Now().UTC()
	h.checking = nil
	close(done)
}
