// Package page holds what petal's newest-first lists share: the cursor a
// caller carries from one page to the next, and the limit of a page. A list
// is ordered by (a time, then a key), both descending; a page starts after
// the entry its cursor names, so entries added meanwhile never shift it.
package page

import (
	"encoding/base64"
	"strconv"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/errs"
)

// Cursor is where a page starts: after the entry (At, Key). The zero cursor
// is the first page.
type Cursor struct {
	At  time.Time
	Key string
}

// maxCursor bounds what a cursor may be before it is decoded.
const maxCursor = 400

// IsStart reports whether c is the first page's cursor.
func (c Cursor) IsStart() bool { return c.Key == "" }

// String is the cursor as callers carry it: opaque base64url. Times are kept
// to the microsecond, as PostgreSQL keeps them, so the next page starts
// exactly after the last entry.
func (c Cursor) String() string {
	if c.IsStart() {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte("1." + strconv.FormatInt(c.At.UnixMicro(), 10) + "." + c.Key))
}

// BadCursor is the refusal of a cursor this site didn't give.
func BadCursor() *errs.Error {
	return errs.New(errs.BadInput, "cursor is not one this site gave", "send the next_cursor of the page before, or none for the first page")
}

// ParseCursor reads a cursor a caller sent back ("" is the first page); its
// key must be one validKey accepts.
func ParseCursor(s string, validKey func(string) bool) (Cursor, error) {
	if s == "" {
		return Cursor{}, nil
	}
	if len(s) > maxCursor {
		return Cursor{}, BadCursor()
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return Cursor{}, BadCursor()
	}
	parts := strings.SplitN(string(raw), ".", 3)
	if len(parts) != 3 || parts[0] != "1" || parts[2] == "" || !validKey(parts[2]) {
		return Cursor{}, BadCursor()
	}
	micros, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return Cursor{}, BadCursor()
	}
	return Cursor{At: time.UnixMicro(micros).UTC(), Key: parts[2]}, nil
}

// Limit reads a page's limit: def when absent (0), else 1 to most.
func Limit(limit, def, most int) (int, error) {
	switch {
	case limit == 0:
		return def, nil
	case limit < 1 || limit > most:
		return 0, errs.Newf(errs.BadInput, "limit must be from 1 to %d, not %d", most, limit)
	}
	return limit, nil
}
