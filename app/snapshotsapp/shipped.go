package snapshotsapp

import (
	"embed"
	"fmt"
	"io/fs"
	"sort"
	"sync"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/snapshots"
)

// shippedFS holds snapshots that ship inside petal, as canonical JSON named
// by their SHA-256, so recorded modes and demos have a reading to draw with
// no chain at hand. They are stored at start and served like any other.
//
//go:embed shipped
var shippedFS embed.FS

// ShippedSnapshot is one snapshot that ships inside petal.
type ShippedSnapshot struct {
	SHA256    string
	Snapshot  snapshots.Snapshot
	Canonical []byte
	Gzipped   []byte
}

var (
	shippedOnce sync.Once
	shipped     []ShippedSnapshot
)

// ShippedSnapshots are the snapshots inside petal. The first is the members
// of marketing.sputnik-dao.near as the near-dao-members reader reads them
// from the recorded chain answers (a test keeps the two in step).
func ShippedSnapshots() []ShippedSnapshot {
	shippedOnce.Do(func() {
		files, _ := fs.Glob(shippedFS, "shipped/*.json")
		sort.Strings(files)
		for _, f := range files {
			raw, err := shippedFS.ReadFile(f)
			if err != nil {
				panic(err)
			}
			s, sha, canonical, err := snapshots.Parse(raw)
			if err != nil {
				panic(fmt.Sprintf("app: shipped snapshot %s: %v", f, err))
			}
			if sum := canon.Sum(raw); sum != sha {
				panic(fmt.Sprintf("app: shipped snapshot %s is not canonical JSON", f))
			}
			gz, err := Gzip(canonical)
			if err != nil {
				panic(err)
			}
			shipped = append(shipped, ShippedSnapshot{SHA256: sha, Snapshot: s, Canonical: canonical, Gzipped: gz})
		}
	})
	return shipped
}

// ShippedBySHA is a snapshot inside petal by its sha256: one shipped, or
// one of the demo map's readings (never stored, so found only here).
func ShippedBySHA(sha string) (ShippedSnapshot, bool) {
	for _, s := range ShippedSnapshots() {
		if s.SHA256 == sha {
			return s, true
		}
	}
	for _, r := range DemoMapReadings() {
		if r.SHA256 == sha {
			return r.ShippedSnapshot, true
		}
	}
	return ShippedSnapshot{}, false
}
