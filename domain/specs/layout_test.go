package specs

import (
	"encoding/json"
	"math/big"
	"math/rand/v2"
	"slices"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/snapshots"
)

// The quickselect Nakamoto agrees with the figures' sorted walk, ties and
// zeros included.
func TestNakamotoAgreesWithFigures(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		n := rng.IntN(60)
		values := make([]*big.Int, n)
		total := new(big.Int)
		for i := range values {
			values[i] = big.NewInt(int64(rng.IntN(1 + round%9)))
			total.Add(total, values[i])
		}
		want := snapshots.FiguresOf(values, 0).Nakamoto
		got := Nakamoto(values, total)
		if want == nil {
			assert.Nil(t, got, "round %d: %v", round, values)
			continue
		}
		require.NotNil(t, got, "round %d: %v", round, values)
		assert.Equal(t, *want, *got, "round %d: %v", round, values)
	}
}

func TestLargestKeepsTheFirstKInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for range 200 {
		items := rng.Perm(rng.IntN(100))
		k := rng.IntN(12)
		got := largest(items, k, func(a, b int) bool { return a > b })
		want := slices.Clone(items)
		slices.SortFunc(want, func(a, b int) int { return b - a })
		assert.Equal(t, want[:min(k, len(want))], append([]int{}, got...))
	}
}

func specFor(sha string, edit func(*Spec)) Spec {
	s := Spec{Schema: SpecSchema, Snapshot: sha, Title: "t", Petals: Petals{Top: 60, Groups: []string{}},
		Size: SizeWeight, Colour: ColourGroup, Labels: LabelsName, Order: OrderWeight, Legend: true, Others: OthersFold}
	if edit != nil {
		edit(&s)
	}
	return s
}

func names(f *Flower) []string {
	out := []string{}
	for _, p := range f.Petals {
		out = append(out, p.Name)
	}
	return out
}

// The spec's petal selection, folding and order, on the DAO fixture
// (weights 4200, 3100, 2600, 1900, 1500, 1200, 900, 600, 450, 300, 150, 0;
// total 16,900).
func TestLayoutFollowsTheSpec(t *testing.T) {
	snap := daoSnapshot()
	cases := []struct {
		name   string
		edit   func(*Spec)
		petals []string
		folded int
	}{
		{"top 3 folds the rest, zero weight included", func(s *Spec) { s.Petals.Top = 3 },
			[]string{"alice.near", "Bob", "carol.near", "9 others"}, 9},
		{"min_share 10% keeps 4200, 3100 and 2600 and 1900 (11.2%)", func(s *Spec) { s.Petals.MinShare = 0.1 },
			[]string{"alice.near", "Bob", "carol.near", "<script>alert(1)</script>", "8 others"}, 8},
		{"zero weight is never a petal of its own unless sizes are equal", nil,
			[]string{"alice.near", "Bob", "carol.near", "<script>alert(1)</script>", "dave.near", "Erin & \"friends\"", "frank.near", "grace.near", "a\x00b\x1bc", "ivan.near", "judy.near"}, 1},
		{"equal sizes draw the zero-weight account too", func(s *Spec) { s.Size = SizeEqual; s.Petals.Top = 12 },
			[]string{"alice.near", "Bob", "carol.near", "<script>alert(1)</script>", "dave.near", "Erin & \"friends\"", "frank.near", "grace.near", "a\x00b\x1bc", "ivan.near", "judy.near", "mallory.near"}, 0},
		{"groups filter: only bots", func(s *Spec) { s.Petals.Groups = []string{"bots"} },
			[]string{"grace.near", "ivan.near"}, 0},
		{"hide others", func(s *Spec) { s.Petals.Top = 2; s.Others = OthersHide },
			[]string{"alice.near", "Bob"}, 10},
		{"order by name, others last", func(s *Spec) { s.Petals.Top = 4; s.Order = OrderName },
			[]string{"<script>alert(1)</script>", "alice.near", "Bob", "carol.near", "8 others"}, 8},
		{"order by group: council, then community, by weight", func(s *Spec) { s.Petals.Top = 5; s.Order = OrderGroup },
			[]string{"alice.near", "Bob", "carol.near", "<script>alert(1)</script>", "dave.near", "7 others"}, 7},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f, err := Layout(specFor(daoSHA, c.edit), snap)
			require.NoError(t, err)
			assert.Equal(t, c.petals, names(f))
			assert.Equal(t, c.folded, f.Folded)
		})
	}

	// The folded petal holds exactly the rest: 16,900 − (4200+3100+2600) = 7000.
	f, err := Layout(specFor(daoSHA, func(s *Spec) { s.Petals.Top = 3 }), snap)
	require.NoError(t, err)
	others := f.Petals[len(f.Petals)-1]
	assert.Equal(t, "7000", others.Weight.String())
	assert.Equal(t, "0.414201", others.Share.String()) // 7000/16900
	assert.Equal(t, KeyOthers, f.Keys[others.Key].Kind)
}

func TestLayoutGivesSixGroupsColoursAndTheRestAGrey(t *testing.T) {
	snap := &snapshots.Snapshot{}
	for g := range 8 {
		id := string(rune('a' + g))
		snap.Groups = append(snap.Groups, snapshots.Group{ID: id, Label: "Group " + id})
		// Group a holds the least, h the most.
		snap.Accounts = append(snap.Accounts, snapshots.Account{ID: "near:mainnet:" + id + ".near", Weight: strconv.Itoa(10 + g), Groups: []string{id}})
	}
	snap.Accounts = append(snap.Accounts, snapshots.Account{ID: "near:mainnet:nobody.near", Weight: "1", Groups: []string{}})
	f, err := Layout(specFor(daoSHA, nil), snap)
	require.NoError(t, err)
	labels := []string{}
	for _, k := range f.Keys {
		labels = append(labels, k.Label)
	}
	// The six heaviest groups (c…h), in the snapshot's order; a, b and the
	// ungrouped account share one grey key.
	assert.Equal(t, []string{"Group c", "Group d", "Group e", "Group f", "Group g", "Group h", "other or no group"}, labels)
	for _, v := range PaletteNames {
		view := DefaultView()
		view.Palette = v
		r := Render(f, view)
		seen := map[string]bool{}
		for _, e := range r.Legend {
			assert.False(t, seen[e.Swatch], "%s: %s used twice", v, e.Swatch)
			seen[e.Swatch] = true
		}
	}
}

func TestProposeHonoursPlainIntents(t *testing.T) {
	snap := daoSnapshot()
	for intent, check := range map[string]func(t *testing.T, s Spec){
		"":                   func(t *testing.T, s Spec) { assert.Equal(t, 11, s.Petals.Top); assert.Equal(t, ColourGroup, s.Colour) },
		"top 5":              func(t *testing.T, s Spec) { assert.Equal(t, 5, s.Petals.Top) },
		"the TOP 500 please": func(t *testing.T, s Spec) { assert.Equal(t, MaxPetals, s.Petals.Top) },
		"equal petals":       func(t *testing.T, s Spec) { assert.Equal(t, SizeEqual, s.Size) },
		"square root sizes":  func(t *testing.T, s Spec) { assert.Equal(t, SizeSqrt, s.Size) },
		"colour by band": func(t *testing.T, s Spec) {
			assert.Equal(t, ColourBand, s.Colour)
			assert.Equal(t, OrderWeight, s.Order)
		},
		"no labels, hide others": func(t *testing.T, s Spec) {
			assert.Equal(t, LabelsNone, s.Labels)
			assert.Equal(t, OthersHide, s.Others)
		},
		"alphabetical":     func(t *testing.T, s Spec) { assert.Equal(t, OrderName, s.Order) },
		"only the Council": func(t *testing.T, s Spec) { assert.Equal(t, []string{"council"}, s.Petals.Groups) },
		"only bots":        func(t *testing.T, s Spec) { assert.Equal(t, []string{"bots"}, s.Petals.Groups) },
		"no legend":        func(t *testing.T, s Spec) { assert.False(t, s.Legend) },
	} {
		t.Run(intent, func(t *testing.T) {
			s, err := Propose(snap, daoSHA, intent)
			require.NoError(t, err)
			_, problems := ParseSpec(mustMarshal(t, s))
			assert.Empty(t, problems, "a proposal is always valid")
			assert.Empty(t, CheckAgainst(s, daoSHA, snap))
			check(t, s)
		})
	}
}

func mustMarshal(t *testing.T, v any) []byte {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}
