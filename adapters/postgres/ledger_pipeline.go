package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// pipelined runs one transaction in two round trips: BEGIN with first (the
// reads that lock), then, once work has read their results and decided, the
// writes it returns with COMMIT. pgx.BeginFunc takes four (BEGIN, reads,
// writes, COMMIT), and on the ledger's hot path every round trip is time the
// locked rows wait. When work or a write fails the transaction is rolled
// back; a connection left in a transaction is never reused (pgxpool closes
// it on release).
func pipelined(ctx context.Context, pool *pgxpool.Pool, first *pgx.Batch, work func(pgx.BatchResults) (*pgx.Batch, error)) (err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("postgres: acquire a connection: %w", err)
	}
	defer conn.Release()
	defer func() {
		if err == nil || conn.Conn().PgConn().TxStatus() == 'I' {
			return
		}
		if _, rbErr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rbErr != nil {
			_ = conn.Conn().Close(context.WithoutCancel(ctx))
		}
	}()
	var batch pgx.Batch
	batch.Queue("BEGIN")
	batch.QueuedQueries = append(batch.QueuedQueries, first.QueuedQueries...)
	br := conn.SendBatch(ctx, &batch)
	if _, err := br.Exec(); err != nil {
		_ = br.Close()
		return fmt.Errorf("postgres: begin: %w", err)
	}
	writes, err := work(br)
	if closeErr := br.Close(); err == nil && closeErr != nil {
		err = closeErr
	}
	if err != nil {
		return err
	}
	writes.Queue("COMMIT")
	if err := conn.SendBatch(ctx, writes).Close(); err != nil {
		return fmt.Errorf("postgres: write and commit: %w", err)
	}
	return nil
}
