package siteapp

import (
	"context"
	"errors"
	"time"

	"github.com/petal-near/petal/app/agentjobsapp"
	"github.com/petal-near/petal/app/config"
	"github.com/petal-near/petal/app/jobsapp"
	"github.com/petal-near/petal/ports"
)

// Retention timing: the job runs every RetentionEvery on one replica, each
// run cut at RetentionDeadline (what is left waits for the next).
const (
	RetentionEvery    = 10 * time.Minute
	RetentionDeadline = 2 * time.Minute
	// DeadLeaseAfter: a process lease not beaten for this long is deleted
	// (its process is long gone: leases lapse after LeaseStale).
	DeadLeaseAfter = time.Hour
	// IdempotencyKept is how long an Idempotency-Key's answer is kept.
	IdempotencyKept = 24 * time.Hour
	// UnpaidTopUpsKept is how long past its deadline a NEAR Intents top-up
	// nobody paid into is kept (one paid into is a money record: kept).
	UnpaidTopUpsKept = 30 * 24 * time.Hour
	// UnshownPicturesKept is how long a profile picture no profile shows is
	// kept: replacing a profile deletes its own at once, but two people
	// dropping one picture at the same moment can each leave it to the other.
	UnshownPicturesKept = time.Hour
	// QuotesKept is how long past its expiry a chat's quote is kept.
	QuotesKept = 24 * time.Hour
	// PromptCountsKept is how long NEAR AI's count of a prefix is kept
	// unseen: a chat's next call reads its previous one's within minutes,
	// a first call the head's; a week keeps what quiet days teach.
	PromptCountsKept = 7 * 24 * time.Hour
)

// retentionBatch is how many rows one statement deletes; a run or an
// exploration takes its events, steps and notes with it, so those go in
// smaller batches.
var retentionBatch = map[ports.Retained]int{
	ports.ExpiredSessions:          1000,
	ports.SpentChallenges:          1000,
	ports.DeadLeases:               1000,
	ports.OldIdempotency:           1000,
	ports.ExpiredPrepared:          1000,
	ports.UnopenedAnonRuns:         100,
	ports.UnopenedAnonExplorations: 100,
	ports.UnpaidTopUps:             1000,
	ports.UnshownPictures:          100, // up to 2 MiB each
	ports.ExpiredQuotes:            1000,
	ports.EndedJobs:                1000,
	ports.OldPromptCounts:          1000,
	ports.OldPromptHeads:           1000,
}

// retentionPause is the breath between two batches, so other transactions
// get the rows' pages and the WAL between them.
const retentionPause = 20 * time.Millisecond

// RetentionJob is the scheduled job that deletes expired sessions, used or
// expired sign-in challenges, dead processes' leases, Idempotency-Key answers
// older than a day, records prepared for publishing that expired and, after cfg.RetainAnon (PETAL_RETAIN_ANON_DAYS; 0 keeps
// them), the anonymous runs and explorations nobody changed or opened, in
// batches. Its metrics count what it deleted, by kind.
func RetentionJob(ret ports.Retention, cfg config.Config, m ports.Metrics) jobsapp.Job {
	deleted := ports.MetricsOrNone(m).Counter("petal_retention_deleted_total", "Rows retention deleted, by kind.", "kind")
	type rule struct {
		what      ports.Retained
		olderThan time.Duration
	}
	rules := []rule{
		{ports.ExpiredSessions, 0},
		{ports.SpentChallenges, 0},
		{ports.DeadLeases, DeadLeaseAfter},
		{ports.OldIdempotency, IdempotencyKept},
		{ports.UnpaidTopUps, UnpaidTopUpsKept},
		{ports.ExpiredPrepared, 0},
		{ports.UnshownPictures, UnshownPicturesKept},
		{ports.ExpiredQuotes, QuotesKept},
		{ports.EndedJobs, agentjobsapp.JobsKept},
		{ports.OldPromptCounts, PromptCountsKept},
		{ports.OldPromptHeads, PromptCountsKept},
	}
	if cfg.RetainAnon > 0 {
		rules = append(rules, rule{ports.UnopenedAnonRuns, cfg.RetainAnon}, rule{ports.UnopenedAnonExplorations, cfg.RetainAnon})
	}
	return jobsapp.Job{Name: "retention", Every: RetentionEvery, Deadline: RetentionDeadline,
		Run: func(ctx context.Context) (int64, error) {
			var total int64
			var failed error
			for _, r := range rules {
				n, err := deleteAll(ctx, ret, r.what, r.olderThan, retentionBatch[r.what])
				total += n
				deleted.Add(float64(n), string(r.what))
				if ctx.Err() != nil {
					return total, ctx.Err()
				}
				failed = errors.Join(failed, err)
			}
			return total, failed
		}}
}

// deleteAll deletes batch after batch until a batch comes back short.
func deleteAll(ctx context.Context, ret ports.Retention, what ports.Retained, olderThan time.Duration, batch int) (int64, error) {
	var total int64
	for {
		n, err := ret.Delete(ctx, what, olderThan, batch)
		total += n
		if err != nil || n < int64(batch) {
			return total, err
		}
		select {
		case <-ctx.Done():
			return total, ctx.Err()
		case <-time.After(retentionPause):
		}
	}
}
