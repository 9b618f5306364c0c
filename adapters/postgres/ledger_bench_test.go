package postgres_test

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/moneyapp"
	"github.com/petal-near/petal/domain/credit"
)

// benchCallers is how many callers run at once.
const benchCallers = 16

// BenchmarkLedger measures reserve+settle pairs per second with 16 concurrent
// callers on one account and on 100 accounts, against a plain single-row
// UPDATE … RETURNING on the same database in the same run (the floor one
// row-locking statement costs). Invite chats and an open server's chats all
// pay on the day's cap too, which is spread over slices
// (ledger_daily_slices.go) so that they don't queue on one row. Run:
//
//	go test ./adapters/postgres -run '^$' -bench BenchmarkLedger -benchtime 3s
func BenchmarkLedger(b *testing.B) {
	url, _ := pgtest.NewURL(b)
	if strings.Contains(url, "://") {
		if strings.Contains(url, "?") {
			url += "&pool_max_conns=24"
		} else {
			url += "?pool_max_conns=24"
		}
	} else {
		url += " pool_max_conns=24"
	}
	pool, err := pgxpool.New(context.Background(), url)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(pool.Close)
	db := &postgres.DB{Pool: pool}
	ctx := context.Background()
	store := postgres.NewLedgerRepository(db)
	ledger := moneyapp.NewLedger(config.Config{}, store, postgres.NewPeopleRepository(db), memory.SystemClock{}, rand.Reader, nil)
	invites := moneyapp.NewInviteService(postgres.NewInviteRepository(db), postgres.NewSessionRepository(db), memory.SystemClock{}, rand.Reader)

	persons := make([]credit.Payer, 100)
	for i := range persons {
		id := fmt.Sprintf("prs_%032x", i)
		if _, err := pool.Exec(ctx, `INSERT INTO people (id) VALUES ($1)`, id); err != nil {
			b.Fatal(err)
		}
		if _, err := pool.Exec(ctx, `INSERT INTO credit_accounts (id, kind, limit_micros) VALUES ($1, 'person', 1000000000000)`, credit.PersonAccount(id)); err != nil {
			b.Fatal(err)
		}
		persons[i] = credit.Payer{Kind: credit.PayPerson, PersonID: id}
	}
	invitePayers := make([]credit.Payer, 100)
	for i := range invitePayers {
		m, err := invites.Mint(ctx, 1_000_000*credit.MicrosPerUSD, 14)
		if err != nil {
			b.Fatal(err)
		}
		invitePayers[i] = credit.Payer{Kind: credit.PayInvite, InviteID: m.ID, DailyCap: 1_000_000_000 * credit.MicrosPerUSD}
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE bench_counter (id int PRIMARY KEY, n bigint NOT NULL);
INSERT INTO bench_counter SELECT g, 0 FROM generate_series(0, 99) g`); err != nil {
		b.Fatal(err)
	}

	var seq atomic.Int64
	pair := func(payers []credit.Payer) func(i int64) error {
		return func(i int64) error {
			payer := payers[int(i)%len(payers)]
			h, err := ledger.Reserve(ctx, payer, fmt.Sprintf("run_%d", seq.Add(1)), "proc_bench", 2_000)
			if err != nil {
				return err
			}
			return ledger.Settle(ctx, h, 1_000)
		}
	}
	update := func(rows int) func(i int64) error {
		return func(i int64) error {
			var n int64
			return pool.QueryRow(ctx, `UPDATE bench_counter SET n = n + 1 WHERE id = $1 RETURNING n`, int(i)%rows).Scan(&n)
		}
	}
	// run does n ops with benchCallers callers at once and says how long.
	run := func(b *testing.B, op func(int64) error, n int64) time.Duration {
		var next atomic.Int64
		var wg sync.WaitGroup
		var failed atomic.Value
		start := time.Now()
		for range benchCallers {
			wg.Go(func() {
				for {
					i := next.Add(1) - 1
					if i >= n {
						return
					}
					if err := op(i); err != nil {
						failed.Store(err)
						return
					}
				}
			})
		}
		wg.Wait()
		elapsed := time.Since(start)
		if err, _ := failed.Load().(error); err != nil {
			b.Fatal(err)
		}
		return elapsed
	}
	for _, bc := range []struct {
		name string
		op   func(int64) error
	}{
		{"update-returning/1-row", update(1)},
		{"reserve+settle/1-account", pair(persons[:1])},
		{"update-returning/100-rows", update(100)},
		{"reserve+settle/100-accounts", pair(persons)},
		{"reserve+settle/100-invites+daily-cap", pair(invitePayers)},
		{"reserve+settle/open-server-daily-cap", pair([]credit.Payer{{Kind: credit.PayOpen, DailyCap: 1_000_000_000 * credit.MicrosPerUSD}})},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportMetric(float64(b.N)/run(b, bc.op, int64(b.N)).Seconds(), "ops/s")
		})
	}
	// The invite pairs beside their floor, taken in turns of 200 each so a
	// shared machine's load weighs on both alike: pairs/s ÷ updates/s is the
	// ratio the day's cap in slices is held to (≥ 0.4).
	b.Run("interleaved/100-invites+daily-cap-vs-update-1-row", func(b *testing.B) {
		const turn = 200
		var pairs, updates time.Duration
		done := int64(0)
		for done < int64(b.N) {
			n := min(turn, int64(b.N)-done)
			updates += run(b, update(1), n)
			pairs += run(b, pair(invitePayers), n)
			done += n
		}
		b.ReportMetric(float64(b.N)/pairs.Seconds(), "pairs/s")
		b.ReportMetric(float64(b.N)/updates.Seconds(), "updates/s")
		b.ReportMetric(updates.Seconds()/pairs.Seconds(), "ratio")
	})
}
