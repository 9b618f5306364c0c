package ports

import (
	"context"
	"encoding/json"
	"time"
)

// MarkWrite is a map's mark as read: its encoded maps.Mark, the logo it
// shows (kept with it, served with the site's pictures) or nil, and how long
// until it is read again.
type MarkWrite struct {
	MapID string
	Mark  json.RawMessage
	Logo  *StoredPicture
	Again time.Duration
}

// MarksVersion changes whenever a kept mark does: how a replica knows its
// cards' marks are stale without reading them all.
type MarksVersion struct {
	Marks   int64
	Changed time.Time
}

// MapMarks keeps the maps' marks (docs/map.md), one per map id, shared by
// every replica. Times of the schedule are the store's own (the database's
// clock), never a replica's.
type MapMarks interface {
	// Due is which of ids are due a read, at most limit: ids never read
	// (nor tried) first, in id order, then those whose next read is due,
	// the longest due first.
	Due(ctx context.Context, ids []string, limit int) ([]string, error)
	// Keep keeps a mark read (and its logo, once by its name), replacing the
	// map's, and clears its failures; it is due again after w.Again.
	Keep(ctx context.Context, w MarkWrite) error
	// Failed notes a read that failed: it is due again after first, doubled
	// with each failure in a row, at most most. A nil mark keeps the mark as
	// it was (none, the first time); else mark replaces it (the curated
	// list filling what the chain could not say), its logo left as it was.
	Failed(ctx context.Context, mapID string, mark json.RawMessage, reason string, first, most time.Duration) error
	// Mark is the map's kept mark, or nil when it has none.
	Mark(ctx context.Context, mapID string) (json.RawMessage, error)
	// Marks is every kept mark by map id (maps tried but never read have
	// none), after the map id after, at most limit: a page, in id order.
	Marks(ctx context.Context, after string, limit int) (map[string]json.RawMessage, string, error)
	// Version is the kept marks' version.
	Version(ctx context.Context) (MarksVersion, error)
}
