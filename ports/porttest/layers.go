package porttest

import (
	"fmt"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/datasets"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/explorations"
	"github.com/petal-near/petal/ports"
)

// Layers is what the layer suite runs over: the layer store and the
// exploration store of the same database.
type Layers struct {
	Explorations ports.ExplorationStore
	Layers       ports.LayerStore
}

// LayerStoreContract runs the LayerStore contract against the stores
// newStores makes (fresh and empty per call).
func LayerStoreContract(t *testing.T, newStores func(t *testing.T) Layers) {
	at := time.Date(2026, 11, 11, 12, 0, 0, 0, time.UTC)
	snapshot := fmt.Sprintf("%064x", 7)
	explore := func(t *testing.T, s Layers, n int, owner string) string {
		id := fmt.Sprintf("exp_%032x", n)
		if err := s.Explorations.CreateExploration(t.Context(), explorations.Exploration{ID: id, Owner: owner, Question: "q", CreatedAt: at, UpdatedAt: at}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	layerIn := func(exp, about string, n int) (ports.KeptLayer, ports.KeptVersion) {
		l := datasets.Layer{Schema: datasets.LayerSchema, About: about, Snapshot: snapshot, Claims: []string{fmt.Sprintf("%064x", n)}}
		lh, _ := datasets.Name(l)
		v := datasets.Version{Schema: datasets.DatasetSchema, About: about, Snapshot: snapshot, Layer: &lh, Add: []string{fmt.Sprintf("near:mainnet:n%d.near", n)}, Drop: []string{}}
		vh, _ := datasets.Name(v)
		return ports.KeptLayer{Hash: lh, Layer: l, Exploration: exp, CreatedAt: at}, ports.KeptVersion{Hash: vh, Version: v, Count: 4, Exploration: exp, CreatedAt: at}
	}

	t.Run("a layer and its version are kept once and read back by hash, by their owner", func(t *testing.T) {
		s := newStores(t)
		mine, theirs := explore(t, s, 1, "prs_a"), explore(t, s, 2, "prs_b")
		l, v := layerIn(mine, "near:mainnet:dao.near", 1)
		le, ve, err := s.Layers.KeepLayer(t.Context(), l, v)
		if err != nil || le || ve {
			t.Fatalf("first: %v %v %v", le, ve, err)
		}
		le, ve, err = s.Layers.KeepLayer(t.Context(), l, v)
		if err != nil || !le || !ve {
			t.Fatalf("again: %v %v %v", le, ve, err)
		}
		got, err := s.Layers.Layer(t.Context(), ports.LayerQuery{Owner: "prs_a"}, l.Hash)
		if err != nil || got.Layer.About != l.Layer.About || got.Exploration != mine || got.Layer.Claims[0] != l.Layer.Claims[0] {
			t.Fatalf("layer: %+v, %v", got, err)
		}
		gv, err := s.Layers.Version(t.Context(), ports.LayerQuery{Owner: "prs_a"}, v.Hash)
		if err != nil || gv.Count != 4 || *gv.Version.Layer != l.Hash || gv.Version.Parent != nil {
			t.Fatalf("version: %+v, %v", gv, err)
		}
		if _, err := s.Layers.Version(t.Context(), ports.LayerQuery{Owner: "prs_b"}, v.Hash); !errs.Is(err, errs.NotFound) {
			t.Fatalf("another owner's: %v", err)
		}
		if _, err := s.Layers.Layer(t.Context(), ports.LayerQuery{Exploration: theirs}, l.Hash); !errs.Is(err, errs.NotFound) {
			t.Fatalf("another exploration's: %v", err)
		}
	})

	t.Run("lists are the owner's, about an address, oldest first, paged", func(t *testing.T) {
		s := newStores(t)
		a, b := explore(t, s, 1, "prs_a"), explore(t, s, 2, "prs_a")
		other := explore(t, s, 3, "prs_b")
		for i, e := range []struct{ exp, about string }{{a, "near:mainnet:x.near"}, {b, "near:mainnet:x.near"}, {a, "near:mainnet:y.near"}, {other, "near:mainnet:x.near"}} {
			l, v := layerIn(e.exp, e.about, i)
			if _, _, err := s.Layers.KeepLayer(t.Context(), l, v); err != nil {
				t.Fatal(err)
			}
		}
		got, err := s.Layers.Layers(t.Context(), ports.LayerQuery{Owner: "prs_a", About: "near:mainnet:x.near", Limit: 10})
		if err != nil || len(got) != 2 || got[0].Exploration != a || got[1].Exploration != b {
			t.Fatalf("layers: %+v, %v", got, err)
		}
		vs, _ := s.Layers.Versions(t.Context(), ports.LayerQuery{Owner: "prs_a", About: "near:mainnet:x.near", Limit: 1})
		if len(vs) != 1 {
			t.Fatalf("a page of one: %+v", vs)
		}
		rest, _ := s.Layers.Versions(t.Context(), ports.LayerQuery{Owner: "prs_a", About: "near:mainnet:x.near", AfterSeq: vs[0].Seq, Limit: 10})
		if len(rest) != 1 || rest[0].Exploration != b {
			t.Fatalf("the next page: %+v", rest)
		}
		one, _ := s.Layers.Layers(t.Context(), ports.LayerQuery{Exploration: a, Limit: 10})
		if len(one) != 2 {
			t.Fatalf("one exploration's: %+v", one)
		}
	})

	t.Run("a fork is kept once; an unknown exploration keeps nothing", func(t *testing.T) {
		s := newStores(t)
		exp := explore(t, s, 1, "anon_a")
		_, v := layerIn(exp, "near:mainnet:x.near", 1)
		if existed, err := s.Layers.KeepVersion(t.Context(), v); err != nil || existed {
			t.Fatalf("%v %v", existed, err)
		}
		if existed, err := s.Layers.KeepVersion(t.Context(), v); err != nil || !existed {
			t.Fatalf("again: %v %v", existed, err)
		}
		v.Exploration = fmt.Sprintf("exp_%032x", 9)
		if _, err := s.Layers.KeepVersion(t.Context(), v); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown exploration: %v", err)
		}
	})
}
