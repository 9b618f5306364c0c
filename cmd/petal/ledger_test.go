package main

import (
	"context"
	"crypto/rand"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/domain/credit"
)

// TestARestartLeavesNothingHeld: a process holds money on the ledger and dies
// (its lease row never heartbeats again); the next start gives it all back.
func TestARestartLeavesNothingHeld(t *testing.T) {
	p := startPetal(t, nil)
	ctx := t.Context()
	m := mintInvite(t, p, "1")
	ledger := moneyapp.NewLedger(config.Config{}, postgres.NewLedgerRepository(p.DB.DB), postgres.NewPeopleRepository(p.DB.DB), memory.SystemClock{}, rand.Reader, nil)
	payer := credit.Payer{Kind: credit.PayInvite, InviteID: m.ID, PerChat: credit.InvitePerChat, DailyCap: p.Cfg.LLMDailyCap}

	_, err := p.DB.Pool.Exec(ctx, `INSERT INTO processes (id, hostname, pid, build_id, heartbeat_at) VALUES ('proc_crashed', 'h', 1, 'dev', now() - interval '5 minutes')`)
	require.NoError(t, err)
	for _, run := range []string{"run_1", "run_2", "run_3"} {
		_, err := ledger.Reserve(ctx, payer, run, "proc_crashed", 10_000)
		require.NoError(t, err)
	}
	settled, err := ledger.Reserve(ctx, payer, "run_4", "proc_crashed", 10_000)
	require.NoError(t, err)
	require.NoError(t, ledger.Settle(ctx, settled, 7_000))
	var held int64
	require.NoError(t, p.DB.Pool.QueryRow(ctx, heldEverywhere).Scan(&held))
	require.EqualValues(t, 60_000, held, "three calls held on the invite and on the daily cap")

	// The restart: the real wiring and start, on the same database.
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	svc, cleanup, err := buildService(rctx, p.Cfg, slog.New(slog.NewTextHandler(io.Discard, nil)), lentPool{p.DB.DB})
	require.NoError(t, err)
	defer cleanup()
	stop, err := svc.start(rctx)
	require.NoError(t, err)
	defer stop()

	require.NoError(t, p.DB.Pool.QueryRow(ctx, heldEverywhere).Scan(&held))
	assert.Zero(t, held, "nothing is left held")
	var open int
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT count(*) FROM credit_holds WHERE status = 'held'`).Scan(&open))
	assert.Zero(t, open)
	var spent int64
	require.NoError(t, p.DB.Pool.QueryRow(ctx, `SELECT spent_micros FROM credit_accounts WHERE id = $1`, credit.InviteAccount(m.ID)).Scan(&spent))
	assert.EqualValues(t, 7_000, spent, "what was settled stays spent; lost holds are not counted")
}

// heldEverywhere is what every account holds: the day's cap's slices included.
const heldEverywhere = `SELECT (SELECT coalesce(sum(held_micros), 0) FROM credit_accounts) + (SELECT coalesce(sum(held_micros), 0) FROM credit_daily_slices)`
