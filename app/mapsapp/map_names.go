package mapsapp

import (
	"context"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/specs"
)

// MapNamer gives a signed-in person's names on petals and the hash of their
// named claims' ids (the annotation service's NamedSet).
type MapNamer interface {
	NamedSet(ctx context.Context, subject string) (map[string]string, string, error)
}

// DrawNamesFrom has the map's lists carry a signed-in person's names hash in
// their picture addresses, and those pictures draw their names for them.
func (s *MapService) DrawNamesFrom(n MapNamer) { s.names = n }

// namesHash is the hash of subject's named claims' ids, "" for a visitor or
// a person with none.
func (s *MapService) namesHash(ctx context.Context, subject string) (string, error) {
	if s.names == nil || subject == "" {
		return "", nil
	}
	_, hash, err := s.names.NamedSet(ctx, subject)
	return hash, err
}

// drawNamed is a picture whose address carries names: drawn with the names
// only for the person whose set that is now, and never kept in the pictures'
// cache. Anyone else gets the picture without names (still answered
// private: the address is that person's).
func (s *MapService) drawNamed(ctx context.Context, st *mapState, subject, snapshot, sha string, l maps.Look, names string, drawn specs.Look) (MapPicture, error) {
	var mine map[string]string
	if s.names != nil && subject != "" {
		got, hash, err := s.names.NamedSet(ctx, subject)
		if err != nil {
			return MapPicture{}, err
		}
		if hash == names {
			mine = got
		}
	}
	loaded, err := s.library.Load(ctx, snapshot)
	if err != nil {
		return MapPicture{}, err
	}
	f, err := specs.Layout(st.specs[sha], loaded.Snapshot)
	if err != nil {
		return MapPicture{}, errs.New(errs.CannotRead, "the drawing could not be laid out").WithCause(err)
	}
	specs.NamePetals(f, l.View, mine)
	out := specs.RenderLook(f, l.View, drawn)
	return MapPicture{SVG: out.SVG, RenderSHA256: out.SHA256, SpecSHA256: sha, Personal: true}, nil
}
