package siteapp

import (
	"context"
	"fmt"
	"time"

	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/ports"
)

// The delete_blobs job: it deletes the blobs no row names any more (a
// picture retention or a replaced profile deleted, a snapshot deleted by
// hand), on one replica at a time.
const (
	DeleteBlobsEvery    = 10 * time.Minute
	DeleteBlobsDeadline = 2 * time.Minute
	// BlobOrphanGrace is how long a blob outlives the last row naming it: a
	// picture dropped and sent again within it is not written again, and an
	// operator who deleted a row by mistake has that long to put it back.
	BlobOrphanGrace = time.Hour
	// sweepBatchDeadline cuts one batch of deletes: the orphans' lines stay
	// locked for it, so a writer naming one of them waits no longer.
	sweepBatchDeadline = 30 * time.Second
	sweepBatch         = 100
	sweepPause         = 20 * time.Millisecond
)

// DeleteBlobsJob is the scheduled job that sweeps orphaned blobs a batch at
// a time, until none older than the grace is left or a batch fails (the
// next run tries again). Its metrics count blobs deleted, by kind, and
// deletes the store refused.
func DeleteBlobsJob(sweeps ports.BlobSweeps, m ports.Metrics) jobsapp.Job {
	m = ports.MetricsOrNone(m)
	deleted := m.Counter("petal_blobs_deleted_total", "Blobs the delete_blobs job deleted because no row names them any more, by kind (snapshots, pictures).", "kind")
	failed := m.Counter("petal_blobs_delete_failures_total", "Blobs the blob store refused to delete (tried again after the grace).")
	sweep := blobSweep{sweeps: sweeps, grace: BlobOrphanGrace, pause: sweepPause, batchDeadline: sweepBatchDeadline,
		observe: func(s ports.BlobsSwept) {
			for kind, n := range s.Deleted {
				deleted.Add(float64(n), kind)
			}
			failed.Add(float64(s.Failed))
		}}
	return jobsapp.Job{Name: "delete_blobs", Every: DeleteBlobsEvery, Deadline: DeleteBlobsDeadline, Run: sweep.run}
}

type blobSweep struct {
	sweeps                      ports.BlobSweeps
	grace, pause, batchDeadline time.Duration
	observe                     func(ports.BlobsSwept)
}

func (b blobSweep) run(ctx context.Context) (int64, error) {
	var total int64
	for {
		bctx, cancel := context.WithTimeout(ctx, b.batchDeadline)
		res, err := b.sweeps.Sweep(bctx, b.grace, sweepBatch)
		cancel()
		b.observe(res)
		for _, n := range res.Deleted {
			total += n
		}
		if ctx.Err() != nil {
			return total, ctx.Err()
		}
		if err != nil {
			// Failed blobs wait out the grace again, so the next batch
			// would not meet them; the run stops to let the store recover.
			return total, fmt.Errorf("delete blobs: %w", err)
		}
		if res.Done {
			return total, nil
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(b.pause):
		}
	}
}
