package siteapp

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/ports"
)

// The move_bodies job (issue 31 #1): it moves snapshot bodies and pictures
// still kept in PostgreSQL into the blob store, on one replica at a time.
// Once every row is moved a run costs one index look per kind.
const (
	MoveBodiesEvery    = 5 * time.Minute
	MoveBodiesDeadline = 4 * time.Minute
	// MoveBatchDeadline cuts one batch: twenty 33 MiB bodies written and
	// read back over a slow link fit in it; a store that hangs does not
	// hold the run.
	MoveBatchDeadline = time.Minute
)

// moveBatch is how many rows one batch moves, per kind: a snapshot body is
// up to 33 MiB gzipped (one in memory at a time), a picture up to 2 MiB.
var moveBatch = map[string]int{ports.SnapshotBodies: 20, ports.PictureBodies: 100}

// Pauses between batches: a breath for the database and the store, and, after
// a batch with failures, a back-off that doubles up to moveBackoffMost. A run
// gives up after moveGiveUpAfter failed batches in a row (the next run tries
// again from the start).
const (
	movePause       = 20 * time.Millisecond
	moveBackoff     = time.Second
	moveBackoffMost = 30 * time.Second
	moveGiveUpAfter = 5
)

// MoveBodiesJob is the scheduled job that moves rows' bytes into the blob
// store a batch at a time. Its metrics count rows and bytes moved and rows
// that failed, by kind.
func MoveBodiesJob(moves ports.BodyMoves, m ports.Metrics) jobsapp.Job {
	m = ports.MetricsOrNone(m)
	moved := m.Counter("petal_bodies_moved_total", "Rows whose bytes the move_bodies job moved from PostgreSQL into the blob store, by kind (snapshots, pictures).", "kind")
	movedBytes := m.Counter("petal_bodies_moved_bytes_total", "Bytes the move_bodies job moved from PostgreSQL into the blob store, by kind.", "kind")
	failed := m.Counter("petal_bodies_move_failures_total", "Rows the move_bodies job tried and left in PostgreSQL (to be tried again), by kind.", "kind")
	mover := bodyMover{moves: moves, pause: movePause, backoff: moveBackoff, batchDeadline: MoveBatchDeadline,
		observe: func(kind string, b ports.BodiesMoved) {
			moved.Add(float64(b.Rows), kind)
			movedBytes.Add(float64(b.Bytes), kind)
			failed.Add(float64(b.Failed), kind)
		}}
	return jobsapp.Job{Name: "move_bodies", Every: MoveBodiesEvery, Deadline: MoveBodiesDeadline, Run: mover.run}
}

type bodyMover struct {
	moves                         ports.BodyMoves
	pause, backoff, batchDeadline time.Duration
	observe                       func(kind string, b ports.BodiesMoved)
}

func (b bodyMover) run(ctx context.Context) (int64, error) {
	var total int64
	var failed error
	for _, kind := range []string{ports.SnapshotBodies, ports.PictureBodies} {
		n, err := b.moveAll(ctx, kind)
		total += n
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
		failed = errors.Join(failed, err)
	}
	return total, failed
}

// moveAll moves batch after batch of kind until none is left after the
// last. Rows that fail are passed over (the next run tries them again), so
// one bad row never stops the rest; the run reports that some failed.
func (b bodyMover) moveAll(ctx context.Context, kind string) (int64, error) {
	var total int64
	var runErr error
	after := ""
	failedInARow := 0
	wait := b.backoff
	for {
		bctx, cancel := context.WithTimeout(ctx, b.batchDeadline)
		res, err := b.moves.Move(bctx, kind, after, moveBatch[kind])
		cancel()
		b.observe(kind, res)
		total += res.Rows
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
		pause := b.pause
		if err != nil {
			runErr = fmt.Errorf("move %s: %w", kind, err)
			failedInARow++
			if failedInARow >= moveGiveUpAfter {
				return total, fmt.Errorf("move %s: %d batches in a row failed, the last: %w", kind, failedInARow, err)
			}
			pause, wait = wait, min(2*wait, moveBackoffMost)
		} else {
			failedInARow, wait = 0, b.backoff
		}
		// A batch that failed before it looked at a row (the database, its
		// deadline) is tried again from the same place.
		after = res.Last
		if res.Done {
			return total, runErr
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(pause):
		}
	}
}
