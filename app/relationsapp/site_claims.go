package relationsapp

import (
	"context"
	_ "embed"
	"sort"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
)

// siteClaimsFile is the site's own claims (claim/v3), checked and shipped in
// the repo; docs/annotations.md says how to add one.
//
//go:embed site-claims.json
var siteClaimsFile []byte

// SiteClaims is the site's own claims about the map's accounts: loaded and
// checked once at start (a claim that fails, or names a person, stops petal),
// and the same for every viewer.
type SiteClaims struct {
	all       []claims.Published // oldest first
	bySubject map[string][]int
	maps      MapAccounts
}

// MapAccounts says what a map holds: its own address as an account id
// ("" for a whole network's) and the accounts of its readings; not_found
// for a map that isn't on the map.
type MapAccounts interface {
	MapAccounts(ctx context.Context, id string) (address string, accounts []string, err error)
}

// NewSiteClaims loads the shipped claims.
func NewSiteClaims() (*SiteClaims, error) { return LoadSiteClaims(siteClaimsFile) }

// LoadSiteClaims loads a claims file, refusing it whole if any claim fails
// its checks.
func LoadSiteClaims(raw []byte) (*SiteClaims, error) {
	all, err := claims.ParsePublished(raw)
	if err != nil {
		return nil, err
	}
	s := &SiteClaims{all: all, bySubject: map[string][]int{}}
	for i, c := range all {
		s.bySubject[c.Subject] = append(s.bySubject[c.Subject], i)
	}
	return s, nil
}

// ReadMapsFrom has the claims find a map's accounts through the map.
func (s *SiteClaims) ReadMapsFrom(m MapAccounts) { s.maps = m }

// MapClaims is GET /api/v1/maps/:id/claims.
type MapClaims struct {
	About  string             `json:"about"`
	Claims []claims.Published `json:"claims"`
}

// ForMap is the site's claims whose subject is one of the map's accounts or
// its own address, oldest first.
func (s *SiteClaims) ForMap(ctx context.Context, id string) (MapClaims, error) {
	id = maps.NormaliseID(id)
	notFound := errs.Newf(errs.NotFound, "no map %s", toolkit.CutForMessage(id)).WithHint("the maps list names every map on this site")
	if _, _, ok := maps.SplitID(id); !ok || len(id) > 300 {
		return MapClaims{}, notFound
	}
	subjects := map[string]bool{}
	if s.maps != nil {
		address, accounts, err := s.maps.MapAccounts(ctx, id)
		if errs.Is(err, errs.NotFound) {
			return MapClaims{}, notFound
		}
		if err != nil {
			return MapClaims{}, err
		}
		if address != "" {
			subjects[address] = true
		}
		for _, a := range accounts {
			subjects[a] = true
		}
	} else {
		// Without the map (tests of the claims alone), a map is known by the
		// claims about its own address.
		if len(s.bySubject[id]) == 0 {
			return MapClaims{}, notFound
		}
		subjects[id] = true
	}
	var at []int
	for subject := range subjects {
		at = append(at, s.bySubject[subject]...)
	}
	sort.Ints(at) // the file's order: oldest first
	out := MapClaims{About: id, Claims: make([]claims.Published, 0, len(at))}
	for _, i := range at {
		out.Claims = append(out.Claims, s.all[i])
	}
	return out, nil
}
