package published

import (
	"time"

	"github.com/petal-near/petal/domain/page"
)

// Statuses of a kept flower.
const (
	StatusOK = "ok"
	// StatusSnapshotMissing: the record is valid but the snapshot it draws is
	// not stored here (yet); it is listed, and drawn nowhere.
	StatusSnapshotMissing = "snapshot_missing"
)

// How a kept flower came.
const (
	CamePrepared = "prepared" // prepared here, then read back from SocialDB
	CameRecord   = "record"   // published by someone, read back on publish_flower without a prepare here
	CameSynced   = "synced"   // found by the SocialDB sync
)

// Kept is a published flower as this site keeps it: the record's bytes
// exactly as they were read from SocialDB, and what lists filter and order
// on.
type Kept struct {
	ID          string
	Network     string // where it is published: near:mainnet or near:testnet
	Maker       string // the SocialDB account it is under (the record's made_by)
	Map         string
	Snapshot    string
	Record      []byte // as published
	Name        string
	MadeAt      time.Time
	PublishedAt time.Time // when this site first kept it; set by the store
	Status      string
	Came        string
}

// Prepared is a record this site prepared for an account to sign, kept until
// it expires so publish_flower can compare what the chain holds with it byte
// for byte.
type Prepared struct {
	ID        string
	Network   string
	Account   string
	Record    []byte // the canonical bytes the transaction writes
	ExpiresAt time.Time
}

// Paging of lists of published flowers.
const (
	DefaultPage = 20
	MaxPage     = 100
)

// PageSize reads a limit: the default when 0, at most MaxPage.
func PageSize(limit int) (int, error) { return page.Limit(limit, DefaultPage, MaxPage) }

// Cursor is where a page of a newest-first list starts: after the item
// (At, Key) in the order (at descending, key descending). Key is a flower's
// id, or a map's id in a list of maps.
type Cursor = page.Cursor

// ParseCursor reads a cursor a caller sent back ("" is the first page).
func ParseCursor(s string) (Cursor, error) {
	return page.ParseCursor(s, func(key string) bool {
		_, _, isMap := SplitMap(key)
		return isMap || ValidID(key)
	})
}
