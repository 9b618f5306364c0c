package mapsapp

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/maps"
	"github.com/petal-near/petal/domain/specs"
)

// resolveView is the one place a view becomes a look for the map: the view
// an address names (?view=<hash>: the default for its whole hash or its first
// twelve characters, else a view someone kept, else not_found), or with none
// the signed-in person's own view, or the default. A kept view never changes
// under its hash, so each is read once per process.
func (s *MapService) resolveView(ctx context.Context, subject, hash string) (maps.Look, error) {
	var v specs.View
	switch {
	case hash == "" && subject != "" && s.views != nil:
		var err error
		if v, err = s.views.PersonView(ctx, subject); err != nil {
			return maps.Look{}, err
		}
	case hash == "", specs.NamesDefaultView(hash):
		return maps.Look{Render: specs.RenderVersion, ViewHash: specs.DefaultViewName(), View: specs.DefaultView()}, nil
	default:
		if l, ok := s.looks.Get(hash); ok {
			return l, nil
		}
		if s.views == nil {
			return maps.Look{}, errs.New(errs.NotFound, "no view has that hash", "leave view out for the default view")
		}
		var err error
		if v, err = s.views.ResolveView(ctx, hash); err != nil {
			return maps.Look{}, err
		}
	}
	name, _, err := specs.ViewName(v)
	if err != nil {
		return maps.Look{}, errs.New(errs.Internal, "the view could not be named").WithCause(err)
	}
	l := maps.Look{Render: specs.RenderVersion, ViewHash: name, View: v}
	if hash != "" {
		s.looks.Put(hash, l)
	}
	return l, nil
}

// MapPicture is a drawing's still picture and its name (the render's
// SHA-256).
type MapPicture struct {
	SVG          []byte
	RenderSHA256 string
	SpecSHA256   string
	// Personal is set for an address with names: whoever asks, the answer is
	// private and never cached (it carries the names only for their person).
	Personal bool
}

type svgKey struct {
	spec, view string
	drawn      specs.Look
}

type renderedSVG struct {
	svg []byte
	sha string
}

// Picture is GET /api/v1/map/:sha/svg: the drawing named by its spec's
// sha256, drawn through the view its address names (look, view, paint as the
// lists give them). Each picture is drawn once per process and kept in a
// cache bounded in bytes, since a gallery asks for every tile at once. A
// hash that isn't on the map, a view nobody kept, or an address whose look
// or paint isn't the one petal draws with that view is not_found.
func (s *MapService) Picture(ctx context.Context, sha, look, view, paint string) (MapPicture, error) {
	return s.PictureFor(ctx, "", sha, look, view, paint, "")
}

// PictureFor is Picture asked for by subject, with the names hash the
// address carries ("" for none): see drawNamed.
func (s *MapService) PictureFor(ctx context.Context, subject, sha, look, view, paint, names string) (MapPicture, error) {
	return s.PictureDrawn(ctx, subject, sha, look, view, paint, names, specs.Look{})
}

// PictureDrawn is PictureFor in a form and scheme (a map card's tile, a dark
// page's): the same drawing, drawn for where it is shown.
func (s *MapService) PictureDrawn(ctx context.Context, subject, sha, look, view, paint, names string, drawn specs.Look) (MapPicture, error) {
	st, err := s.current(ctx)
	if err != nil {
		return MapPicture{}, err
	}
	snapshot, ok := st.index.OnTheMap(sha)
	if !ok {
		return MapPicture{}, errs.New(errs.NotFound, "no drawing on the map has that hash", "use a picture address as the map's lists give it")
	}
	l, err := s.resolveView(ctx, "", view)
	if err != nil {
		return MapPicture{}, err
	}
	if (look != "" && look != l.Render) || (paint != "" && paint != l.View.Palette) {
		return MapPicture{}, errs.New(errs.NotFound, "petal no longer draws this picture with that look",
			"use the picture address the map's lists give now (its look is "+l.Render+")")
	}
	if names != "" {
		return s.drawNamed(ctx, st, subject, snapshot, sha, l, names, drawn)
	}
	key := svgKey{spec: sha, view: l.ViewHash, drawn: drawn}
	if r, ok := s.svgs.Get(key); ok {
		s.svgLookup.Add(1, "hit")
		return MapPicture{SVG: r.svg, RenderSHA256: r.sha, SpecSHA256: sha}, nil
	}
	s.svgLookup.Add(1, "miss")
	v, err, _ := s.rebuild.Do(fmt.Sprintf("svg %s %s %d %t", sha, l.ViewHash, drawn.Form, drawn.Dark), func() (any, error) {
		// The drawing is shared by everyone asking for it now, so it doesn't
		// end with the request that started it.
		dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), mapBuildTimeout)
		defer cancel()
		loaded, err := s.library.Load(dctx, snapshot)
		if err != nil {
			return nil, err
		}
		f, err := specs.Layout(st.specs[sha], loaded.Snapshot)
		if err != nil {
			return nil, errs.New(errs.CannotRead, "the drawing could not be laid out").WithCause(err)
		}
		out := specs.RenderLook(f, l.View, drawn)
		r := renderedSVG{svg: out.SVG, sha: out.SHA256}
		s.svgs.Put(key, r)
		return r, nil
	})
	if err != nil {
		return MapPicture{}, err
	}
	r := v.(renderedSVG)
	return MapPicture{SVG: r.svg, RenderSHA256: r.sha, SpecSHA256: sha}, nil
}

// mapRows is the map a public site ships (docs/map.md, "Public mode"):
// copies of SocialDB's answers in their wire shape, one folder per network.
//
//go:embed map-rows
var mapRows embed.FS

// ShippedMapRows is the shipped copies of SocialDB's answers, rooted at the
// folder that holds mainnet/ and testnet/.
func ShippedMapRows() fs.FS {
	sub, err := fs.Sub(mapRows, "map-rows")
	if err != nil {
		panic(err) // the folder is embedded above
	}
	return sub
}

// DraftSpec is the canonical JSON of a drawing on the map by its spec's
// sha256, for /d/:hash: a flower synced from SocialDB or shipped with a
// public site is on the map without ever being kept as a draft here, and its
// view_url must still open. not_found for a hash the map doesn't hold.
func (s *MapService) DraftSpec(ctx context.Context, sha string) ([]byte, error) {
	st, err := s.current(ctx)
	if err != nil {
		return nil, err
	}
	spec, ok := st.specs[sha]
	if !ok {
		return nil, errs.New(errs.NotFound, "no drawing on the map has that hash")
	}
	name, canonical, err := specs.Name(spec)
	if err != nil || name != sha {
		return nil, errs.New(errs.Internal, "a drawing on the map does not match its name")
	}
	return canonical, nil
}
