package ports

import (
	"context"
	"time"
)

// Opens notes when a run or an exploration was last opened (read through a
// door by its owner or a link), which decides when retention may delete an
// anonymous one that nobody opens any more.
type Opens interface {
	RunOpened(ctx context.Context, id string) error
	ExplorationOpened(ctx context.Context, id string) error
}

// Retained names what retention deletes.
type Retained string

// What retention deletes, and when.
const (
	ExpiredSessions          Retained = "sessions"               // past expires_at
	SpentChallenges          Retained = "challenges"             // sign-in challenges used or past expires_at
	DeadLeases               Retained = "leases"                 // process leases not beaten for olderThan
	OldIdempotency           Retained = "idempotency"            // Idempotency-Key answers older than olderThan
	ExpiredPrepared          Retained = "prepared_flowers"       // records prepared for publishing, past expires_at
	UnopenedAnonRuns         Retained = "anonymous_runs"         // ended runs with no person as owner, neither changed nor opened for olderThan
	UnopenedAnonExplorations Retained = "anonymous_explorations" // explorations with no person as owner, neither changed nor opened for olderThan
	ExpiredQuotes            Retained = "chat_quotes"            // quotes for chats expired olderThan ago, used or not
	UnpaidTopUps             Retained = "unpaid_top_ups"         // NEAR Intents top-ups never paid into (PENDING_DEPOSIT), their deadline olderThan ago
	EndedJobs                Retained = "ended_jobs"             // a person's agents' jobs done, failed or stopped olderThan ago (their takes go with them)
	UnshownPictures          Retained = "unshown_pictures"       // profile pictures no profile shows, kept olderThan ago (a profile's replacement deletes its own; this takes what two at once left)
	OldPromptCounts          Retained = "prompt_counts"          // NEAR AI's prompt counts of prefixes not seen for olderThan
	OldPromptHeads           Retained = "prompt_heads"           // what is known of tool-list heads not seen for olderThan
)

// Retention deletes what petal no longer needs, a batch at a time: each
// call is one short transaction that locks only the rows it deletes
// (skipping any another holds), so it never holds up the service for long.
type Retention interface {
	// Delete removes at most batch rows of what (olderThan where it says so)
	// and returns how many it removed.
	Delete(ctx context.Context, what Retained, olderThan time.Duration, batch int) (int64, error)
}
