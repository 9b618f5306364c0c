package published

import (
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/errs"
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
func PageSize(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultPage, nil
	case limit < 0 || limit > MaxPage:
		return 0, errs.Newf(errs.BadInput, "limit must be between 1 and %d", MaxPage)
	}
	return limit, nil
}

// Cursor is where a page of a newest-first list starts: after the item
// (At, Key) in the order (at descending, key descending). Key is a flower's
// id, or a map's id in a list of maps.
type Cursor struct {
	At  time.Time
	Key string
}

// IsStart reports whether c is the first page's cursor.
func (c Cursor) IsStart() bool { return c.Key == "" }

// String is the cursor as callers carry it: opaque base64url.
func (c Cursor) String() string {
	if c.IsStart() {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(fmt.Appendf(nil, "1.%d.%s", c.At.UnixMicro(), c.Key))
}

// ParseCursor reads a cursor a caller sent back ("" is the first page).
func ParseCursor(s string) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	bad := errs.New(errs.BadInput, "cursor is not one this site gave", "send the next_cursor of the page before, or none for the first page")
	if len(s) > 400 {
		return Cursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, bad
	}
	parts := strings.SplitN(string(raw), ".", 3)
	if len(parts) != 3 || parts[0] != "1" || parts[2] == "" {
		return Cursor{}, bad
	}
	micros, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return Cursor{}, bad
	}
	if _, _, ok := SplitMap(parts[2]); !ok && !ValidID(parts[2]) {
		return Cursor{}, bad
	}
	return Cursor{At: time.UnixMicro(micros).UTC(), Key: parts[2]}, nil
}
