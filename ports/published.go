package ports

import (
	"context"
	"time"

	"github.com/petal-near/petal/domain/published"
)

// FlowersChannel is the notification every replica hears when a published
// flower is newly kept: its payload is "<id> <map>" (neither has a space).
// The PostgreSQL adapter sends it with the keeping transaction, so it arrives
// once the flower is readable.
const FlowersChannel = "petal_flowers"

// PublishedFlowers keeps flowers published to NEAR (flower/v1), each once by
// its id, and what this site prepared for an account to sign.
type PublishedFlowers interface {
	// Keep stores a flower unless one with its id is kept already (then
	// nothing changes and kept is false); PublishedAt is set by the store.
	// A newly kept flower is announced on FlowersChannel. It returns the
	// flower as kept, the earlier one when it was there.
	Keep(ctx context.Context, f published.Kept) (stored published.Kept, kept bool, err error)
	// Get is one kept flower by id, or errs.NotFound.
	Get(ctx context.Context, id string) (published.Kept, error)
	// List is a page of kept flowers, newest first (published_at, then id,
	// both descending), filtered by what the query names.
	List(ctx context.Context, q FlowerQuery) (FlowerPage, error)
	// Maps is a page of the maps flowers were published to, each with its
	// newest flower and how many it has, the map with the newest flower
	// first (then by map id, descending).
	Maps(ctx context.Context, q MapQuery) (MapPage, error)
	// SetStatus changes the status of every kept flower drawing snapshot
	// (a snapshot that arrived, say); it returns how many changed.
	SetStatus(ctx context.Context, snapshot, status string) (int64, error)

	// Prepare keeps a record prepared for account until p.ExpiresAt; the
	// same (id, account, network) again only moves its expiry.
	Prepare(ctx context.Context, p published.Prepared) error
	// Prepared is what was prepared under (id, account, network) and has not
	// expired at now, or errs.NotFound.
	Prepared(ctx context.Context, id, account, network string, now time.Time) (published.Prepared, error)
}

// FlowerQuery selects a page of published flowers. Empty filters select all.
type FlowerQuery struct {
	Network  string
	Maker    string
	Map      string
	Snapshot string
	// NotMaps leaves these maps' flowers out (the hidden maps).
	NotMaps []string
	Limit   int              // 1 to published.MaxPage
	After   published.Cursor // the page starts after it; zero for the first
}

// FlowerPage is a page of flowers; Next is the cursor of the page after it,
// zero when this is the last.
type FlowerPage struct {
	Flowers []published.Kept
	Next    published.Cursor
}

// MapQuery selects a page of maps. An empty Network selects all.
type MapQuery struct {
	Network string
	Limit   int // 1 to published.MaxPage
	After   published.Cursor
}

// MapSummary is one map with its newest flower.
type MapSummary struct {
	Map     string
	Flowers int64
	Newest  published.Kept
}

// MapPage is a page of maps.
type MapPage struct {
	Maps []MapSummary
	Next published.Cursor
}
