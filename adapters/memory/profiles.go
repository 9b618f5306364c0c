package memory

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// Profiles is ports.ProfileStore in one process's memory, for app tests;
// serve keeps profiles in PostgreSQL. As there, a picture is kept only while
// a profile shows it, so what is kept is bounded by the people. It passes
// porttest.ProfileStoreContract.
type Profiles struct {
	mu       sync.Mutex
	profiles map[string]ports.KeptProfile
	uses     map[string][]ports.PictureUse // by person
	pictures map[string]ports.StoredPicture
}

var _ ports.ProfileStore = (*Profiles)(nil)

// NewProfiles makes an empty store.
func NewProfiles() *Profiles {
	return &Profiles{profiles: map[string]ports.KeptProfile{}, uses: map[string][]ports.PictureUse{}, pictures: map[string]ports.StoredPicture{}}
}

// KeepProfile implements ports.ProfileStore.
func (s *Profiles) KeepProfile(_ context.Context, person string, body []byte, pictures []ports.StoredPicture, uses []ports.PictureUse, at time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	// Decide first, against what would be kept, so a refusal changes nothing.
	after := func(sha string) (ports.StoredPicture, bool) {
		if p, ok := s.pictures[sha]; ok {
			return p, true
		}
		i := slices.IndexFunc(pictures, func(p ports.StoredPicture) bool { return p.SHA256 == sha })
		if i < 0 {
			return ports.StoredPicture{}, false
		}
		return pictures[i], true
	}
	for _, u := range uses {
		if p, ok := after(u.SHA256); !ok || p.MediaType != u.MediaType {
			return errs.Newf(errs.BadInput, "the %s names a picture this site doesn't keep as %s", u.Slot, u.MediaType)
		}
	}
	for _, p := range pictures {
		if _, ok := s.pictures[p.SHA256]; !ok {
			p.Bytes = slices.Clone(p.Bytes)
			s.pictures[p.SHA256] = p
		}
	}
	s.profiles[person] = ports.KeptProfile{Body: slices.Clone(body), UpdatedAt: at}
	s.uses[person] = slices.Clone(uses)
	shown := map[string]bool{}
	for _, us := range s.uses {
		for _, u := range us {
			shown[u.SHA256] = true
		}
	}
	for sha := range s.pictures {
		if !shown[sha] {
			delete(s.pictures, sha)
		}
	}
	return nil
}

// Profile implements ports.ProfileStore.
func (s *Profiles) Profile(_ context.Context, person string) (ports.KeptProfile, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.profiles[person]
	if !ok {
		return ports.KeptProfile{}, errs.New(errs.NotFound, "this person keeps no profile")
	}
	p.Body = slices.Clone(p.Body)
	return p, nil
}

// Picture implements ports.ProfileStore.
func (s *Profiles) Picture(_ context.Context, sha256 string) (ports.StoredPicture, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pictures[sha256]
	if !ok {
		return ports.StoredPicture{}, errs.New(errs.NotFound, "no picture is kept under this name")
	}
	p.Bytes = slices.Clone(p.Bytes)
	return p, nil
}

// Pictures is how many pictures are kept.
func (s *Profiles) Pictures() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.pictures)
}
