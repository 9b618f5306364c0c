package ports

import "context"

// JobPositions keeps where a scheduled job that walks something long (every
// account of SocialDB, say) stopped, by job and part (a network), shared by
// every replica: a run cut at its deadline is continued by the next, wherever
// it runs.
type JobPositions interface {
	// Position is where job's walk of part stands: 0 when none is kept.
	Position(ctx context.Context, job, part string) (int64, error)
	// SetPosition keeps where job's walk of part stands now.
	SetPosition(ctx context.Context, job, part string, position int64) error
}
