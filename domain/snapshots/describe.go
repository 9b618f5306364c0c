package snapshots

import (
	"fmt"
	"math/big"
	"slices"
	"strings"
)

// Description is describe_snapshot's answer: who weighs most and how the
// groups split the weight. Shares are fractions from 0 to 1.
type Description struct {
	SHA256      string       `json:"sha256"`
	Title       string       `json:"title"`
	About       string       `json:"about"`
	Count       int          `json:"count"`
	TotalWeight string       `json:"total_weight"`
	Top         []TopAccount `json:"top"`
	Groups      []GroupShare `json:"groups"`
}

// TopAccount is one of the heaviest accounts.
type TopAccount struct {
	ID     string  `json:"id"`
	Label  string  `json:"label"`
	Weight string  `json:"weight"`
	Share  float64 `json:"share"`
}

// GroupShare is one group's members and weight.
type GroupShare struct {
	ID     string  `json:"id"`
	Label  string  `json:"label"`
	Count  int     `json:"count"`
	Weight string  `json:"weight"`
	Share  float64 `json:"share"`
}

// MaxTop bounds describe's top list.
const MaxTop = 100

// Describe sums a snapshot's weights exactly and lists its top accounts
// (heaviest first, then by id) and its groups in their own order.
func Describe(sha string, s Snapshot, top int) (Description, error) {
	if top < 0 {
		top = 0
	}
	top = min(top, MaxTop, len(s.Accounts))
	weights := make([]*big.Rat, len(s.Accounts))
	total := new(big.Rat)
	groupWeight := map[string]*big.Rat{}
	groupCount := map[string]int{}
	for i, a := range s.Accounts {
		w, ok := new(big.Rat).SetString(a.Weight)
		if !ok || !IsDecimal(a.Weight) {
			return Description{}, fmt.Errorf("account %s: weight %q is not a decimal", a.ID, a.Weight)
		}
		weights[i] = w
		total.Add(total, w)
		for _, g := range a.Groups {
			if groupWeight[g] == nil {
				groupWeight[g] = new(big.Rat)
			}
			groupWeight[g].Add(groupWeight[g], w)
			groupCount[g]++
		}
	}
	order := make([]int, len(s.Accounts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		if c := weights[b].Cmp(weights[a]); c != 0 {
			return c
		}
		return strings.Compare(s.Accounts[a].ID, s.Accounts[b].ID)
	})
	d := Description{SHA256: sha, Title: s.Title, About: s.About, Count: len(s.Accounts), TotalWeight: DecimalString(total),
		Top: make([]TopAccount, 0, top), Groups: make([]GroupShare, 0, len(s.Groups))}
	for _, i := range order[:top] {
		a := s.Accounts[i]
		d.Top = append(d.Top, TopAccount{ID: a.ID, Label: a.Label, Weight: a.Weight, Share: share(weights[i], total)})
	}
	for _, g := range s.Groups {
		w := groupWeight[g.ID]
		if w == nil {
			w = new(big.Rat)
		}
		d.Groups = append(d.Groups, GroupShare{ID: g.ID, Label: g.Label, Count: groupCount[g.ID], Weight: DecimalString(w), Share: share(w, total)})
	}
	return d, nil
}

func share(w, total *big.Rat) float64 {
	if total.Sign() == 0 {
		return 0
	}
	f, _ := new(big.Rat).Quo(w, total).Float64()
	return f
}

// DecimalString writes an exact decimal (a sum of decimal strings always has
// a finite expansion) without trailing zeros.
func DecimalString(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// The denominator of a sum of decimals divides a power of ten; find it.
	den := new(big.Int).Set(r.Denom())
	digits := 0
	ten := big.NewInt(10)
	pow := big.NewInt(1)
	for new(big.Int).Mod(pow, den).Sign() != 0 {
		pow.Mul(pow, ten)
		digits++
		if digits > 400 {
			return r.FloatString(40) // not a decimal sum; never expected
		}
	}
	return strings.TrimRight(strings.TrimRight(r.FloatString(digits), "0"), ".")
}

// ShiftDecimal turns an integer amount in a token's smallest units (yocto,
// micro …) into the token's own units: ShiftDecimal("1500000", 6) = "1.5".
func ShiftDecimal(raw string, decimals int) (string, error) {
	if raw == "" || strings.TrimLeft(raw, "0123456789") != "" || decimals < 0 || decimals > 77 {
		return "", fmt.Errorf("amount %q is not a whole number of smallest units", raw)
	}
	raw = strings.TrimLeft(raw, "0")
	if raw == "" {
		return "0", nil
	}
	if decimals == 0 {
		return raw, nil
	}
	if len(raw) <= decimals {
		raw = strings.Repeat("0", decimals-len(raw)+1) + raw
	}
	whole, frac := raw[:len(raw)-decimals], strings.TrimRight(raw[len(raw)-decimals:], "0")
	if frac == "" {
		return whole, nil
	}
	return whole + "." + frac, nil
}

// KeepTop keeps the heaviest max accounts (ties by id) when there are more,
// and records the cut in the source. The kept accounts stay in their order.
func KeepTop(s *Snapshot, max int) {
	if len(s.Accounts) <= max {
		return
	}
	total := len(s.Accounts)
	ws := make(map[string]*big.Rat, total)
	for _, a := range s.Accounts {
		w, _ := new(big.Rat).SetString(a.Weight)
		if w == nil {
			w = new(big.Rat)
		}
		ws[a.ID] = w
	}
	ranked := slices.Clone(s.Accounts)
	slices.SortStableFunc(ranked, func(a, b Account) int {
		if c := ws[b.ID].Cmp(ws[a.ID]); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	keep := make(map[string]bool, max)
	for _, a := range ranked[:max] {
		keep[a.ID] = true
	}
	kept := s.Accounts[:0]
	for _, a := range s.Accounts {
		if keep[a.ID] {
			kept = append(kept, a)
		}
	}
	s.Accounts = kept
	s.Source.Cut = &Cut{Total: total, Kept: len(kept)}
}

// Summary says in a line what a snapshot holds, for answers that never
// carry the whole body.
func Summary(s Snapshot) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d accounts", len(s.Accounts))
	if len(s.Groups) > 0 {
		counts := map[string]int{}
		for _, a := range s.Accounts {
			for _, g := range a.Groups {
				counts[g]++
			}
		}
		parts := make([]string, 0, len(s.Groups))
		for i, g := range s.Groups {
			if i == 8 {
				parts = append(parts, fmt.Sprintf("and %d more", len(s.Groups)-8))
				break
			}
			label := g.Label
			if label == "" {
				label = g.ID
			}
			parts = append(parts, fmt.Sprintf("%s %d", label, counts[g.ID]))
		}
		fmt.Fprintf(&b, " in %d groups (%s)", len(s.Groups), strings.Join(parts, ", "))
	}
	if total, err := SumWeights(weightsOf(s)...); err == nil {
		fmt.Fprintf(&b, ", total weight %s", DecimalString(total))
	}
	fmt.Fprintf(&b, "; read on %s at block %d (%s)", s.Chain, s.Block.Height, s.Block.Time)
	if s.Source.Cut != nil {
		fmt.Fprintf(&b, "; the top %d of %d accounts kept", s.Source.Cut.Kept, s.Source.Cut.Total)
	}
	return b.String()
}

func weightsOf(s Snapshot) []string {
	out := make([]string, len(s.Accounts))
	for i, a := range s.Accounts {
		out[i] = a.Weight
	}
	return out
}
