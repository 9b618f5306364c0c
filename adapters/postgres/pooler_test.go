package postgres_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/postgres"
	"github.com/petal-near/petal/adapters/postgres/pgtest"
)

// Through Debian's pgbouncer in transaction mode with two server
// connections: the pool connects (no startup parameter the pooler refuses),
// many clients' statements and transactions share the server connections
// (no named prepared statement to collide), LISTEN on the direct
// connection hears a NOTIFY sent through the pooler, and the statement
// timeout, which a pooler cannot pass at connect, is checked on the role.
func TestThePoolWorksThroughPgBouncerInTransactionMode(t *testing.T) {
	ctx := t.Context()
	db := pgtest.New(t)
	bouncer := pgtest.StartPgBouncer(t, "transaction", 2)
	pooledURL := bouncer.URL(t, db.URL)
	const timeout = 30 * time.Second

	// Today's pool on the pooler: refused at connect.
	naive, err := postgres.ConnectWith(ctx, pooledURL, postgres.PoolOptions{StatementTimeout: timeout})
	require.NoError(t, err)
	err = naive.Ping(ctx)
	naive.Close()
	require.Error(t, err)
	assert.Contains(t, err.Error(), "unsupported startup parameter")

	pooled, err := postgres.ConnectWith(ctx, pooledURL, postgres.PoolOptions{MaxConns: 8, StatementTimeout: timeout, DirectURL: db.URL})
	require.NoError(t, err)
	t.Cleanup(pooled.Close)
	require.True(t, pooled.Pooled())
	assert.Equal(t, pgx.QueryExecModeCacheDescribe, pooled.Pool.Config().ConnConfig.DefaultQueryExecMode)
	_, err = db.Pool.Exec(ctx, `CREATE TABLE pooled_probe (client int, n int, note text, PRIMARY KEY (client, n))`)
	require.NoError(t, err)

	before := bouncer.Transactions(t, db.Name)
	const clients, each = 12, 25
	var wg sync.WaitGroup
	errs := make(chan error, clients)
	for c := range clients {
		wg.Go(func() {
			for n := range each {
				var sum int
				if err := pooled.Pool.QueryRow(ctx, `SELECT $1::int + $2::int`, c, n).Scan(&sum); err != nil || sum != c+n {
					errs <- fmt.Errorf("client %d query %d: %v (%d)", c, n, err, sum)
					return
				}
				err := pgx.BeginFunc(ctx, pooled.Pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `INSERT INTO pooled_probe VALUES ($1, $2, $3)`, c, n, "x"); err != nil {
						return err
					}
					_, err := tx.Exec(ctx, `UPDATE pooled_probe SET note = note || $3 WHERE client = $1 AND n = $2`, c, n, "y")
					return err
				})
				if err != nil {
					errs <- fmt.Errorf("client %d transaction %d: %w", c, n, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	var rows int
	require.NoError(t, db.Pool.QueryRow(ctx, `SELECT count(*) FROM pooled_probe WHERE note = 'xy'`).Scan(&rows))
	assert.Equal(t, clients*each, rows)
	assert.Eventually(t, func() bool { return bouncer.Transactions(t, db.Name)-before >= clients*each*2 }, 10*time.Second, 100*time.Millisecond,
		"the statements went through pgbouncer")

	// LISTEN goes to the server itself, with the timeout at connect.
	listener := postgres.NewListener(pooled, slog.New(slog.NewTextHandler(io.Discard, nil)), "pooled_probe")
	heard := make(chan string, 1)
	listener.On(func(p string) { heard <- p }, func() {})
	lctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); _ = listener.Run(lctx) }()
	t.Cleanup(func() { stop(); <-done })
	<-listener.Ready()
	_, err = pooled.Pool.Exec(ctx, `SELECT pg_notify('pooled_probe', 'through the pooler')`)
	require.NoError(t, err)
	select {
	case p := <-heard:
		assert.Equal(t, "through the pooler", p)
	case <-time.After(10 * time.Second):
		t.Fatal("the direct LISTEN heard nothing of a NOTIFY sent through the pooler")
	}
	direct, err := pgx.ConnectConfig(ctx, pooled.DirectConfig())
	require.NoError(t, err)
	var setting string
	require.NoError(t, direct.QueryRow(ctx, `SHOW statement_timeout`).Scan(&setting))
	_ = direct.Close(ctx)
	assert.Equal(t, "30s", setting)

	// Through the pooler the timeout is the role's: missing, it is named.
	err = pooled.CheckStatementTimeout(ctx, timeout)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "ALTER ROLE")
	_, err = db.Pool.Exec(ctx, fmt.Sprintf(`ALTER ROLE CURRENT_USER IN DATABASE %s SET statement_timeout = '30s'`, pgx.Identifier{db.Name}.Sanitize()))
	require.NoError(t, err)
	admin, err := pgx.Connect(ctx, bouncer.Admin)
	require.NoError(t, err)
	_, err = admin.Exec(ctx, "RECONNECT "+db.Name) // new server sessions take the role's setting
	_ = admin.Close(ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return pooled.CheckStatementTimeout(ctx, timeout) == nil }, 10*time.Second, 50*time.Millisecond)

	// A direct pool (no pooler) is unchanged: the timeout at connect.
	assert.False(t, db.Pooled())
	same, err := postgres.ConnectWith(ctx, db.URL, postgres.PoolOptions{StatementTimeout: timeout, DirectURL: db.URL})
	require.NoError(t, err)
	defer same.Close()
	assert.False(t, same.Pooled())
	assert.Equal(t, "30000", same.Pool.Config().ConnConfig.RuntimeParams["statement_timeout"])
}

// An operator's own query mode in DATABASE_URL wins over petal's choice.
func TestAPooledURLKeepsItsOwnQueryMode(t *testing.T) {
	db, err := postgres.ConnectWith(t.Context(), "postgres://u@127.0.0.1:1/x?default_query_exec_mode=simple_protocol",
		postgres.PoolOptions{DirectURL: "postgres://u@127.0.0.1:2/x"})
	require.NoError(t, err)
	defer db.Close()
	assert.True(t, db.Pooled())
	assert.Equal(t, pgx.QueryExecModeSimpleProtocol, db.Pool.Config().ConnConfig.DefaultQueryExecMode)
	assert.Equal(t, uint16(2), db.DirectConfig().Port)
}
