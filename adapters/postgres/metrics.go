package postgres

import (
	"context"

	"github.com/petal-near/petal/ports"
)

// Observe declares the database's metrics on m, read at scrape time: the
// pool's connections, and what the database holds that every replica shares
// (running runs, open holds). The shared ones read the same on every replica:
// aggregate them with max, not sum.
func (db *DB) Observe(m ports.Metrics) {
	m.Observe("petal_db_pool_connections", "Connections in this process's pool, by state (acquired, idle, constructing) and max (the pool's size).",
		[]string{"state"}, func(_ context.Context, emit func(float64, ...string)) error {
			st := db.Pool.Stat()
			emit(float64(st.AcquiredConns()), "acquired")
			emit(float64(st.IdleConns()), "idle")
			emit(float64(st.ConstructingConns()), "constructing")
			emit(float64(st.MaxConns()), "max")
			return nil
		})
	m.Observe("petal_db_pool_acquires", "Connections acquired from this process's pool since it started, by how: at once, after waiting (empty pool), or cancelled while waiting. Cumulative.",
		[]string{"how"}, func(_ context.Context, emit func(float64, ...string)) error {
			st := db.Pool.Stat()
			emit(float64(st.AcquireCount()-st.EmptyAcquireCount()), "at_once")
			emit(float64(st.EmptyAcquireCount()), "waited")
			emit(float64(st.CanceledAcquireCount()), "cancelled")
			return nil
		})
	m.Observe("petal_db_pool_acquire_wait_seconds", "Time spent waiting for a connection from this process's pool since it started. Cumulative: rate() of it is the share of time requests wait on the pool.",
		nil, func(_ context.Context, emit func(float64, ...string)) error {
			emit(db.Pool.Stat().EmptyAcquireWaitTime().Seconds())
			return nil
		})
	m.Observe("petal_runs_running", "Agent runs whose status is running, on every replica (the same on each: aggregate with max).",
		nil, func(ctx context.Context, emit func(float64, ...string)) error {
			var n int64
			// runs_running_process is a partial index on exactly these rows.
			if err := db.Pool.QueryRow(ctx, `SELECT count(*) FROM runs WHERE status = 'running'`).Scan(&n); err != nil {
				return err
			}
			emit(float64(n))
			return nil
		})
	m.Observe("petal_holds_outstanding", "Ledger holds not yet settled or released, on every replica: how many (holds) and how many micro-dollars they reserve (micros). The same on each replica: aggregate with max.",
		[]string{"measure"}, func(ctx context.Context, emit func(float64, ...string)) error {
			var n, micros int64
			// credit_holds_open is a partial index on exactly these rows.
			if err := db.Pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(amount_micros), 0) FROM credit_holds WHERE status = 'held'`).Scan(&n, &micros); err != nil {
				return err
			}
			emit(float64(n), "holds")
			emit(float64(micros), "micros")
			return nil
		})
}
