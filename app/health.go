package app

import (
	"context"

	"github.com/petal-near/petal/ports"
)

// Health is what GET /api/v1/health answers.
type Health struct {
	OK          bool   `json:"ok"`
	DB          string `json:"db"`
	Map         string `json:"map"`
	LLM         string `json:"llm"`
	AgentAccess string `json:"agent_access"`
	Public      bool   `json:"public"`
	BuildID     string `json:"build_id"`
}

// HealthService reports whether petal can serve.
type HealthService struct {
	cfg Config
	db  ports.Database
}

// NewHealthService makes the health check over the database.
func NewHealthService(cfg Config, db ports.Database) *HealthService {
	return &HealthService{cfg: cfg, db: db}
}

// Check pings the database. The process keeps serving when it does not answer;
// the pool reconnects by itself when it comes back.
func (h *HealthService) Check(ctx context.Context) Health {
	out := Health{
		OK:          true,
		DB:          "up",
		Map:         "up",
		LLM:         h.cfg.LLM(),
		AgentAccess: h.cfg.AgentAccessReported(),
		Public:      h.cfg.Public,
		BuildID:     BuildID,
	}
	if h.cfg.Public {
		// A public site draws the map from the copies it ships, never a live read.
		out.Map = "held"
	}
	if err := h.db.Ping(ctx); err != nil {
		out.OK = false
		out.DB = "down"
	}
	return out
}
