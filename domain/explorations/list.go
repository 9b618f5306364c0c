package explorations

import (
	"encoding/base64"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/errs"
)

// Caps on an exploration's links and on a page of them.
const (
	// MaxLiveLinks is how many links not revoked one exploration may hold:
	// enough for every reader an owner shares with, and a bound on what a
	// stranger's session can make of one exploration.
	MaxLiveLinks = 100

	DefaultLinkPage = 100 // links on a page when the caller doesn't say
	MaxLinkPage     = 200 // the most a caller may ask for
)

// ListCursor is where a page of a list ordered by (time, id) starts: after
// the item (At, ID). The explorations list runs newest first, the links list
// oldest first; each page's last item makes the next page's cursor.
type ListCursor struct {
	At time.Time
	ID string
}

// IsStart reports whether c is the first page's cursor.
func (c ListCursor) IsStart() bool { return c.ID == "" }

// String is the cursor as a caller sends it back ("" for the first page).
func (c ListCursor) String() string {
	if c.IsStart() {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString([]byte("l." + strconv.FormatInt(c.At.UnixMicro(), 10) + "." + c.ID))
}

var listItemPattern = regexp.MustCompile(`^[a-z]{3}_[0-9A-Za-z]{1,64}$`)

// ParseListCursor reads a list's cursor a caller sent back ("" is the first
// page).
func ParseListCursor(s string) (ListCursor, error) {
	if s == "" {
		return ListCursor{}, nil
	}
	bad := errs.New(errs.BadInput, "cursor is not one this site gave", "send the next_cursor of the page before, or none for the first page")
	if len(s) > 200 {
		return ListCursor{}, bad
	}
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return ListCursor{}, bad
	}
	parts := strings.SplitN(string(raw), ".", 3)
	if len(parts) != 3 || parts[0] != "l" || !listItemPattern.MatchString(parts[2]) {
		return ListCursor{}, bad
	}
	micros, err := strconv.ParseInt(parts[1], 10, 64)
	if err != nil {
		return ListCursor{}, bad
	}
	return ListCursor{At: time.UnixMicro(micros).UTC(), ID: parts[2]}, nil
}

// LinkPage reads a links page's limit: the default when absent, at most
// MaxLinkPage.
func LinkPage(limit int) (int, error) {
	switch {
	case limit == 0:
		return DefaultLinkPage, nil
	case limit < 0 || limit > MaxLinkPage:
		return 0, errs.Newf(errs.BadInput, "limit must be between 1 and %d", MaxLinkPage)
	}
	return limit, nil
}

// TooManyLinks is the refusal of a link past MaxLiveLinks; nothing is made.
func TooManyLinks() *errs.Error {
	return errs.Newf(errs.Conflict, "this exploration already has %d links that work, the most one may", MaxLiveLinks).
		WithHint("revoke a link you no longer share, then make the new one")
}
