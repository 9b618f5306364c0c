// Package conversations is a person's (or an anonymous session's) work as one
// list: their runs with Petals' agent and their explorations, newest activity
// first, a page at a time; and a conversation's name, which Petals' agent
// gives it (name_conversation).
package conversations

import (
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/page"
)

// Kinds of conversation.
const (
	KindRun         = "run"
	KindExploration = "exploration"
)

// StatusOpen is an exploration's status in the list: it has no run state.
const StatusOpen = "open"

// Limits of the list and of a name.
const (
	DefaultLimit = 20
	MaxLimit     = 100
	// MaxTitle is the longest name, in characters (an exploration's title
	// has the same bound).
	MaxTitle = 200
)

// Conversation is one entry of the list.
type Conversation struct {
	ID        string
	Kind      string // KindRun or KindExploration
	Title     string // "" when it has none yet
	UpdatedAt time.Time
	Status    string // a run's status, or StatusOpen
	// Exploration is a run's exploration (its flowers), "" when it has none.
	Exploration string
}

// Cursor is where a page starts: after the entry (At: its updated_at, Key:
// its id) in the list's order (updated_at, then id, both descending). The
// zero cursor is the first page.
type Cursor = page.Cursor

// After is the cursor of the page after the one ending with e.
func After(e Conversation) Cursor { return Cursor{At: e.UpdatedAt, Key: e.ID} }

// idPattern is a run's or an exploration's id.
var idPattern = regexp.MustCompile(`^(run|exp)_[0-9a-f]{32}$`)

// ParseCursor reads a cursor this site gave; "" is the first page.
func ParseCursor(s string) (Cursor, error) { return page.ParseCursor(s, idPattern.MatchString) }

// PageLimit reads a page's limit: the default when absent (0), else 1 to
// MaxLimit.
func PageLimit(limit int) (int, error) { return page.Limit(limit, DefaultLimit, MaxLimit) }

// CleanTitle is a name as kept: plain text on one line, its runs of spaces
// (line breaks and tabs among them) made one space, trimmed, at most
// MaxTitle characters. Empty, too long, or with other control or format
// characters (a bidi override; joiners are kept), it is bad_input naming
// field.
func CleanTitle(field, title string) (string, error) {
	if !utf8.ValidString(title) {
		return "", errs.Newf(errs.BadInput, "%s is not UTF-8", field)
	}
	var b strings.Builder
	space := false
	for _, r := range title {
		switch {
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) && r != '\u200c' && r != '\u200d':
			return "", errs.Newf(errs.BadInput, "%s holds a control character (U+%04X); a name is plain text", field, r)
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		b.WriteRune(r)
	}
	clean := b.String()
	switch n := utf8.RuneCountInString(clean); {
	case n == 0:
		return "", errs.Newf(errs.BadInput, "%s is empty", field).WithHint("a few words saying what the conversation is about")
	case n > MaxTitle:
		return "", errs.Newf(errs.BadInput, "%s is %d characters, more than the %d a name may be", field, n, MaxTitle)
	}
	return clean, nil
}
