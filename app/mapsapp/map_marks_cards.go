package mapsapp

import (
	"context"
	"encoding/json"
	"time"

	"github.com/petal-near/petal/ports"
)

// The cards carry the marks kept in ports.MapMarks: loaded with the index
// (every kept mark, a page at a time; one per map, so bounded by the maps),
// never per card. A replica learns of marks another wrote by asking their
// version at most every marksRecheck, in the background.

const (
	// marksRecheck is how often a replica asks whether the marks changed.
	marksRecheck = 30 * time.Second
	marksPage    = 1000
)

// loadMarks is every kept mark, or the index's own when their version is
// what it was (a mark unchanged costs a rebuild one small query).
func (s *MapService) loadMarks(ctx context.Context, prev *mapState) (map[string]json.RawMessage, ports.MarksVersion, error) {
	v, err := s.marks.Version(ctx)
	if err != nil {
		return nil, ports.MarksVersion{}, err
	}
	if prev != nil && prev.marksVersion == v && prev.marksLoaded {
		return prev.marks, v, nil
	}
	all := map[string]json.RawMessage{}
	after := ""
	for {
		page, next, err := s.marks.Marks(ctx, after, marksPage)
		if err != nil {
			return nil, ports.MarksVersion{}, err
		}
		for id, m := range page {
			all[id] = m
		}
		if next == "" {
			return all, v, nil
		}
		after = next
	}
}

// withMarks gives a freshly built state the marks: the ones kept, or on a
// failure to read them the previous index's (a card without its mark for a
// while is better than no map).
func (s *MapService) withMarks(ctx context.Context, st *mapState) {
	if s.marks == nil {
		return
	}
	prev := s.state.Load()
	marks, v, err := s.loadMarks(ctx, prev)
	if err != nil {
		s.log.WarnContext(ctx, "map: the marks could not be read; the cards keep the ones they had", "err", err)
		if prev != nil {
			st.marks, st.marksVersion, st.marksLoaded = prev.marks, prev.marksVersion, prev.marksLoaded
			st.index = st.index.WithMarks(prev.marks)
		}
		return
	}
	st.marks, st.marksVersion, st.marksLoaded = marks, v, true
	st.index = st.index.WithMarks(marks)
	s.marksChecked.Store(time.Now().UnixNano())
}

// RefreshMarks has this replica's cards carry the marks kept now: when they
// changed, the same index with them and a new page cache.
func (s *MapService) RefreshMarks(ctx context.Context) {
	if s.marks == nil {
		return
	}
	st := s.state.Load()
	if st == nil {
		return // the first build loads them
	}
	s.marksChecked.Store(time.Now().UnixNano())
	marks, v, err := s.loadMarks(ctx, st)
	if err != nil {
		s.log.WarnContext(ctx, "map: the marks could not be read", "err", err)
		return
	}
	if st.marksLoaded && v == st.marksVersion {
		return
	}
	next := *st
	next.marks, next.marksVersion, next.marksLoaded = marks, v, true
	next.index = st.index.WithMarks(marks)
	next.pages = newMapPageCache()
	// A build that landed meanwhile read the marks itself.
	s.state.CompareAndSwap(st, &next)
}

// recheckMarks asks, in the background and at most every marksRecheck,
// whether another replica changed the marks.
func (s *MapService) recheckMarks() {
	if s.marks == nil || time.Since(time.Unix(0, s.marksChecked.Load())) < marksRecheck {
		return
	}
	if !s.checkingMarks.CompareAndSwap(false, true) {
		return
	}
	go func() {
		defer s.checkingMarks.Store(false)
		ctx, cancel := context.WithTimeout(context.Background(), mapBuildTimeout)
		defer cancel()
		s.RefreshMarks(ctx)
	}()
}
