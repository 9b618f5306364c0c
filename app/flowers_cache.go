package app

import (
	"slices"
	"sync"

	"github.com/petal-near/petal/domain/snapshots"
)

// CachedAccounts bounds the decoded snapshots a flower service keeps in
// memory, in accounts: three of the largest. A snapshot never changes under
// its name, so a decoded one is good for as long as it is kept; reading and
// decoding 100,000 accounts takes about 200 ms, and the agent draws each
// flower twice (the tool, then its flower event).
const CachedAccounts = 3 * snapshots.MaxAccounts

// snapshotCache keeps the most recently used decoded snapshots, up to a
// number of accounts in all.
type snapshotCache struct {
	mu     sync.Mutex
	limit  int
	held   int
	recent []string // least recently used first
	byName map[string]*snapshots.Snapshot
}

func newSnapshotCache(limit int) *snapshotCache {
	return &snapshotCache{limit: limit, byName: map[string]*snapshots.Snapshot{}}
}

func (c *snapshotCache) get(sha string) (*snapshots.Snapshot, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	snap, ok := c.byName[sha]
	if ok {
		c.touch(sha)
	}
	return snap, ok
}

func (c *snapshotCache) put(sha string, snap *snapshots.Snapshot) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.byName[sha]; ok || len(snap.Accounts) > c.limit {
		return
	}
	c.byName[sha] = snap
	c.recent = append(c.recent, sha)
	c.held += len(snap.Accounts)
	for c.held > c.limit && len(c.recent) > 0 {
		old := c.recent[0]
		c.recent = c.recent[1:]
		c.held -= len(c.byName[old].Accounts)
		delete(c.byName, old)
	}
}

func (c *snapshotCache) touch(sha string) {
	if i := slices.Index(c.recent, sha); i >= 0 {
		c.recent = append(append(c.recent[:i:i], c.recent[i+1:]...), sha)
	}
}
