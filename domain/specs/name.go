package specs

import (
	"sync"

	"github.com/petal-near/petal/domain/canon"
)

// Name is a spec's name, the lower-case hex SHA-256 of its canonical JSON
// (RFC 8785), with those bytes. Absent optional members are written out
// first, so a spec sent without petals.groups and one sent with [] are one
// spec with one name.
func Name(s Spec) (sha256 string, canonical []byte, err error) {
	s.normalise()
	return canon.SHA256Hex(s)
}

// ViewName is a view's name (its hash), the lower-case hex SHA-256 of its
// canonical JSON with every member written out, with those bytes: a view sent
// with members left out and the same view with them written are one view.
func ViewName(v View) (sha256 string, canonical []byte, err error) {
	return canon.SHA256Hex(v)
}

// DefaultViewName is the default view's name.
func DefaultViewName() string { return defaultViewName() }

var defaultViewName = sync.OnceValue(func() string {
	name, _, err := ViewName(DefaultView())
	if err != nil {
		panic(err) // a fixed struct always marshals
	}
	return name
})

// ShortViewNameLen is how many characters of the default view's name older
// picture addresses carried; such a prefix still names the default view.
const ShortViewNameLen = 12

// IsViewName reports whether s has the shape of a whole view name.
func IsViewName(s string) bool {
	if len(s) != 64 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// NamesDefaultView reports whether s names the default view: its whole name,
// or its first twelve characters as older addresses carried them.
func NamesDefaultView(s string) bool {
	d := DefaultViewName()
	return s == d || s == d[:ShortViewNameLen]
}
