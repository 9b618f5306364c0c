package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/petal-near/petal/ports"
)

// Retention deletes expired and unused rows in batches, and notes when runs
// and explorations are opened.
type Retention struct {
	db *DB
}

var (
	_ ports.Retention = (*Retention)(nil)
	_ ports.Opens     = (*Retention)(nil)
)

// NewRetention makes the retention keeper over db.
func NewRetention(db *DB) *Retention { return &Retention{db: db} }

// openedEvery is how stale opened_at may get before an open writes it again,
// so a run read a thousand times an hour costs one write, not a thousand.
const openedEvery = "1 hour"

// RunOpened implements ports.Opens.
func (r *Retention) RunOpened(ctx context.Context, id string) error {
	_, err := r.db.Pool.Exec(ctx, `UPDATE runs SET opened_at = now() WHERE id = $1 AND opened_at < now() - interval '`+openedEvery+`'`, id)
	if err != nil {
		return fmt.Errorf("note the run opened: %w", err)
	}
	return nil
}

// ExplorationOpened implements ports.Opens.
func (r *Retention) ExplorationOpened(ctx context.Context, id string) error {
	_, err := r.db.Pool.Exec(ctx, `UPDATE explorations SET opened_at = now() WHERE id = $1 AND opened_at < now() - interval '`+openedEvery+`'`, id)
	if err != nil {
		return fmt.Errorf("note the exploration opened: %w", err)
	}
	return nil
}

// retentionSQL picks, per kind, the rows past retention ($1: olderThan in
// seconds, where it applies). Each is deleted by its ctid, a batch at a time,
// under row locks taken with SKIP LOCKED: what another transaction holds is
// left for the next batch.
var retentionSQL = map[ports.Retained]struct{ table, where string }{
	ports.ExpiredSessions: {"sessions", `expires_at < now()`},
	ports.SpentChallenges: {"auth_challenges", `(expires_at < now() OR used_at IS NOT NULL)`},
	ports.DeadLeases:      {"processes", `heartbeat_at < now() - make_interval(secs => $1)`},
	ports.OldIdempotency:  {"exploration_idempotency", `created_at < now() - make_interval(secs => $1)`},
	ports.ExpiredPrepared: {"publish_prepared", `expires_at < now()`},
	// A run that still runs is never deleted, whoever's it is.
	ports.UnopenedAnonRuns: {"runs", `(owner IS NULL OR owner LIKE 'anon\_%') AND status <> 'running'
		AND greatest(updated_at, opened_at) < now() - make_interval(secs => $1)`},
	ports.UnopenedAnonExplorations: {"explorations", `(owner = '' OR owner LIKE 'anon\_%')
		AND greatest(updated_at, opened_at) < now() - make_interval(secs => $1)`},
	// Only quotes nobody ever paid into: a top-up that saw a deposit is a
	// money record, kept.
	ports.UnpaidTopUps: {"intent_topups", `status = 'PENDING_DEPOSIT' AND deadline < now() - make_interval(secs => $1)`},
	// A picture no profile and no map's mark shows: one a profile or a mark
	// is starting to show holds a lock on it, so SKIP LOCKED leaves it.
	ports.UnshownPictures: {"media", `created_at < now() - make_interval(secs => $1)
		AND NOT EXISTS (SELECT 1 FROM profile_media u WHERE u.sha256 = media.sha256)
		AND NOT EXISTS (SELECT 1 FROM map_marks k WHERE k.logo_sha256 = media.sha256)`},
	ports.ExpiredQuotes:   {"chat_quotes", `expires_at < now() - make_interval(secs => $1)`},
	ports.OldPromptCounts: {"model_prompt_prefixes", `seen_at < now() - make_interval(secs => $1)`},
	ports.OldPromptHeads:  {"model_prompt_heads", `seen_at < now() - make_interval(secs => $1)`},
	ports.EndedJobs:       {"agent_jobs", `status IN ('done', 'failed', 'stopped') AND updated_at < now() - make_interval(secs => $1)`},
}

// Delete implements ports.Retention.
func (r *Retention) Delete(ctx context.Context, what ports.Retained, olderThan time.Duration, batch int) (int64, error) {
	q, ok := retentionSQL[what]
	if !ok {
		return 0, fmt.Errorf("retention: nothing called %q", what)
	}
	tag, err := r.db.Pool.Exec(ctx, `DELETE FROM `+q.table+` WHERE ctid = ANY (ARRAY(
	SELECT ctid FROM `+q.table+` WHERE `+q.where+` AND $1::float8 IS NOT NULL LIMIT $2 FOR UPDATE SKIP LOCKED))`,
		olderThan.Seconds(), batch)
	if err != nil {
		return 0, fmt.Errorf("retention: delete %s: %w", what, err)
	}
	return tag.RowsAffected(), nil
}
