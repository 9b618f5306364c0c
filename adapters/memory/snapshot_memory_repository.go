package memory

import (
	"bytes"
	"context"
	"slices"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// SnapshotStore keeps snapshots in memory: for tests that only need a store
// to exist. It passes porttest.SnapshotStoreContract, as PostgreSQL's does.
type SnapshotStore struct {
	mu    sync.Mutex
	bySHA map[string]ports.StoredSnapshot
	order []string // names in the order stored, so ties break as PostgreSQL's do
}

var _ ports.SnapshotStore = (*SnapshotStore)(nil)

// NewSnapshotStore makes an empty store.
func NewSnapshotStore() *SnapshotStore {
	return &SnapshotStore{bySHA: map[string]ports.StoredSnapshot{}}
}

// Put implements ports.SnapshotStore.
func (s *SnapshotStore) Put(_ context.Context, in ports.StoredSnapshot) (bool, error) {
	at, err := time.Parse(time.RFC3339Nano, in.Block.Time)
	if err != nil {
		return false, errs.New(errs.BadInput, "block time is not an RFC 3339 time").WithCause(err)
	}
	in.Block.Time = at.UTC().Format(time.RFC3339Nano)
	in.Gzipped = bytes.Clone(in.Gzipped)
	if in.StoredAt.IsZero() {
		in.StoredAt = time.Now()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if held, ok := s.bySHA[in.SHA256]; ok {
		// A reading this site made itself is this site's, whoever stored
		// the same bytes first; only the origin moves, and only up.
		if in.Origin == "this_site" && held.Origin != "this_site" {
			held.Origin = "this_site"
			s.bySHA[in.SHA256] = held
		}
		return false, nil
	}
	s.bySHA[in.SHA256] = in
	s.order = append(s.order, in.SHA256)
	return true, nil
}

// Get implements ports.SnapshotStore.
func (s *SnapshotStore) Get(_ context.Context, sha256 string) (ports.StoredSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	got, ok := s.bySHA[sha256]
	if !ok {
		return ports.StoredSnapshot{}, errs.New(errs.NotFound, "no such snapshot")
	}
	got.Gzipped = bytes.Clone(got.Gzipped)
	return got, nil
}

// Latest implements ports.SnapshotStore: of this site's own readings, the
// one at the highest block, the latest stored among equals.
func (s *SnapshotStore) Latest(_ context.Context, targetKey string) (ports.StoredSnapshot, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var best *ports.StoredSnapshot
	for _, sha := range s.order {
		c := s.bySHA[sha]
		if c.TargetKey != targetKey || c.Origin != "this_site" {
			continue
		}
		if best == nil || c.Block.Height > best.Block.Height ||
			(c.Block.Height == best.Block.Height && !c.StoredAt.Before(best.StoredAt)) {
			best = &c
		}
	}
	if best == nil {
		return ports.StoredSnapshot{}, errs.New(errs.NotFound, "no such snapshot")
	}
	out := *best
	out.Gzipped = bytes.Clone(out.Gzipped)
	return out, nil
}

// DAODirectory keeps the DAO lists in memory. It passes
// porttest.DAODirectoryContract.
type DAODirectory struct {
	mu    sync.Mutex
	lists map[string]daoList
}

type daoList struct {
	accounts []string
	readAt   time.Time
}

var _ ports.DAODirectory = (*DAODirectory)(nil)

// NewDAODirectory makes an empty directory.
func NewDAODirectory() *DAODirectory { return &DAODirectory{lists: map[string]daoList{}} }

// DAOs implements ports.DAODirectory.
func (d *DAODirectory) DAOs(_ context.Context, chain string) ([]string, time.Time, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	l, ok := d.lists[chain]
	if !ok {
		return nil, time.Time{}, nil
	}
	return slices.Clone(l.accounts), l.readAt, nil
}

// ReplaceDAOs implements ports.DAODirectory: sorted, each account once.
func (d *DAODirectory) ReplaceDAOs(_ context.Context, chain string, accounts []string, readAt time.Time) error {
	sorted := slices.Clone(accounts)
	slices.Sort(sorted)
	sorted = slices.Compact(sorted)
	d.mu.Lock()
	defer d.mu.Unlock()
	d.lists[chain] = daoList{accounts: sorted, readAt: readAt}
	return nil
}

// SpecStore keeps flower specs in memory. It passes porttest.SpecStoreContract.
type SpecStore struct {
	mu    sync.Mutex
	specs map[string][]byte
}

var _ ports.SpecStore = (*SpecStore)(nil)

// NewSpecStore makes an empty store.
func NewSpecStore() *SpecStore { return &SpecStore{specs: map[string][]byte{}} }

// Keep implements ports.SpecStore.
func (s *SpecStore) Keep(_ context.Context, sha256, _ string, canonical []byte) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.specs[sha256]; ok {
		return false, nil
	}
	s.specs[sha256] = bytes.Clone(canonical)
	return true, nil
}

// Get implements ports.SpecStore.
func (s *SpecStore) Get(_ context.Context, sha256 string) ([]byte, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.specs[sha256]
	if !ok {
		return nil, errs.New(errs.NotFound, "no such spec")
	}
	return bytes.Clone(b), nil
}
