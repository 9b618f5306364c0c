package specs

import "github.com/petal-near/petal/domain/canon"

// Name is a spec's name, the lower-case hex SHA-256 of its canonical JSON
// (RFC 8785), with those bytes. Absent optional members are written out
// first, so a spec sent without petals.groups and one sent with [] are one
// spec with one name.
func Name(s Spec) (sha256 string, canonical []byte, err error) {
	s.normalise()
	return canon.SHA256Hex(s)
}
