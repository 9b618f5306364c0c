package specs

import (
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/petal-near/petal/domain/snapshots"
)

// Proposal bounds: at least enough petals to show the shape, at most what
// stays legible; the petals cover the accounts holding about four fifths.
const (
	proposeMinPetals = 12
	proposeMaxPetals = 36
	proposeCover     = 0.8
	// sqrtBelow: when the smallest petal would have less than this fraction of
	// the largest's area (a seventh of its length), petals are sized by the square root of weight so the
	// small ones stay visible.
	sqrtBelow = 1.0 / 50
)

var topN = regexp.MustCompile(`\btop\s+(\d{1,4})\b`)

// Propose makes a good spec for a snapshot: enough petals to show its shape,
// the tail folded into one "others" petal, colours that tell its groups apart
// (or, with fewer than two groups among the petals, bands of share). intent is
// a person's words; a few plain requests in it are honoured ("top 20", "equal
// sizes", "square root", "no labels", "by name", "hide others", "only
// <group>").
func Propose(snap *snapshots.Snapshot, sha string, intent string) (Spec, error) {
	w, err := snapshots.ParseWeights(snap.Accounts)
	if err != nil {
		return Spec{}, err
	}
	s := Spec{
		Schema:   SpecSchema,
		Snapshot: sha,
		Title:    proposedTitle(snap),
		Size:     SizeWeight,
		Colour:   ColourBand,
		Labels:   LabelsName,
		Order:    OrderWeight,
		Legend:   true,
		Others:   OthersFold,
	}
	in := strings.ToLower(intent)
	s.Petals.Groups = groupsAsked(snap, in)

	desc := make([]*big.Int, 0, len(w.Values))
	for i, v := range w.Values {
		if len(s.Petals.Groups) == 0 || slices.ContainsFunc(snap.Accounts[i].Groups, func(g string) bool { return slices.Contains(s.Petals.Groups, g) }) {
			desc = append(desc, v)
		}
	}
	slices.SortFunc(desc, func(a, b *big.Int) int { return b.Cmp(a) })
	positive := 0
	for positive < len(desc) && desc[positive].Sign() > 0 {
		positive++
	}
	s.Petals.Top = petalsFor(desc[:positive])
	if m := topN.FindStringSubmatch(in); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			s.Petals.Top = min(max(n, 1), MaxPetals)
		}
	}

	// Size: weight, unless the smallest petal (or the folded tail) would be a
	// sliver beside the largest.
	s.Petals.Top = max(s.Petals.Top, 1)
	if shown := min(s.Petals.Top, positive); shown > 0 {
		smallest, largest := desc[shown-1], desc[0]
		if shown < positive {
			tail := new(big.Int)
			for _, v := range desc[shown:positive] {
				tail.Add(tail, v)
			}
			if tail.Cmp(largest) > 0 {
				largest = tail
			}
		}
		if r, _ := new(big.Rat).SetFrac(smallest, largest).Float64(); r < sqrtBelow {
			s.Size = SizeSqrt
		}
	}

	// Colour by group when at least two groups are among the petals.
	draft := s
	draft.Colour = ColourGroup
	draft.normalise()
	if f, err := Layout(draft, snap); err == nil {
		named := 0
		for _, k := range f.Keys {
			if k.Kind == KeyGroup {
				named++
			}
		}
		if named >= 2 {
			s.Colour, s.Order = ColourGroup, OrderGroup
		}
	}

	switch {
	case strings.Contains(in, "equal"):
		s.Size = SizeEqual
	case strings.Contains(in, "square root") || strings.Contains(in, "sqrt"):
		s.Size = SizeSqrt
	case strings.Contains(in, "by weight") || strings.Contains(in, "proportional"):
		s.Size = SizeWeight
	}
	switch {
	case strings.Contains(in, "band") || strings.Contains(in, "by share"):
		s.Colour = ColourBand
		if s.Order == OrderGroup {
			s.Order = OrderWeight
		}
	case strings.Contains(in, "by group") || strings.Contains(in, "colour by group") || strings.Contains(in, "color by group"):
		s.Colour, s.Order = ColourGroup, OrderGroup
	}
	if strings.Contains(in, "no labels") || strings.Contains(in, "without labels") {
		s.Labels = LabelsNone
	}
	if strings.Contains(in, "by name") || strings.Contains(in, "alphabetical") {
		s.Order = OrderName
	}
	if strings.Contains(in, "hide others") || strings.Contains(in, "hide the tail") || strings.Contains(in, "no others") {
		s.Others = OthersHide
	}
	if strings.Contains(in, "no legend") || strings.Contains(in, "without legend") {
		s.Legend = false
	}
	s.normalise()
	return s, nil
}

// petalsFor is how many of the positive weights (largest first) become
// petals: all of them when few, else as many as hold about four fifths of the
// total, between proposeMinPetals and proposeMaxPetals.
func petalsFor(desc []*big.Int) int {
	if len(desc) <= proposeMaxPetals {
		return max(len(desc), 1)
	}
	total := new(big.Int)
	for _, v := range desc {
		total.Add(total, v)
	}
	// Covered when run × 10 ≥ total × 8.
	goal := new(big.Int).Mul(total, big.NewInt(int64(proposeCover*10)))
	run, k := new(big.Int), 0
	for k < len(desc) && new(big.Int).Mul(run, big.NewInt(10)).Cmp(goal) < 0 {
		run.Add(run, desc[k])
		k++
	}
	return min(max(k, proposeMinPetals), proposeMaxPetals)
}

// groupsAsked are the groups an intent asks for with "only …", by id or label.
func groupsAsked(snap *snapshots.Snapshot, in string) []string {
	if !strings.Contains(in, "only") {
		return []string{}
	}
	out := []string{}
	for _, g := range snap.Groups {
		for _, name := range []string{g.ID, g.Label} {
			name = strings.ToLower(strings.TrimSpace(name))
			if name != "" && containsWord(in, name) && !slices.Contains(out, g.ID) {
				out = append(out, g.ID)
			}
		}
	}
	return out
}

func containsWord(text, word string) bool {
	for i := 0; ; {
		j := strings.Index(text[i:], word)
		if j < 0 {
			return false
		}
		start, end := i+j, i+j+len(word)
		if (start == 0 || !isWordByte(text[start-1])) && (end == len(text) || !isWordByte(text[end])) {
			return true
		}
		i = start + 1
	}
}

func isWordByte(c byte) bool {
	return c == '_' || c == '-' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z'
}

func proposedTitle(snap *snapshots.Snapshot) string {
	t := strings.TrimSpace(snap.Title)
	if t == "" {
		t = "Flower of " + strings.TrimSpace(snap.Network)
	}
	if strings.TrimSpace(t) == "Flower of" {
		t = "Flower"
	}
	return cut(t, MaxTitle)
}
