package httpapi

import "strings"

// A map's mark on the pages (docs/pages.md): its logo, the organisation's
// name and its token's symbol, and where each came from, in small text and
// in full on hover. Every value goes through html/template like the rest.

// pageMark is a card's mark as GET /api/v1/maps gives it.
type pageMark struct {
	Name   *pageMarkText `json:"name"`
	Symbol *pageMarkText `json:"symbol"`
	Logo   *struct {
		URL    string `json:"url"`
		Source string `json:"source"`
		Ref    string `json:"ref"`
		At     string `json:"at"`
	} `json:"logo"`
}

type pageMarkText struct {
	Value      string `json:"value"`
	Source     string `json:"source"`
	Ref        string `json:"ref"`
	VerifiedBy string `json:"verified_by"`
	At         string `json:"at"`
}

// Shown is whether the mark has anything to show: a mark read with nothing
// known shows nothing.
func (m *pageMark) Shown() bool {
	return m != nil && (m.Name != nil || m.Symbol != nil || m.Logo != nil)
}

// Alt is the logo's alternative text: the organisation's name, else its
// symbol.
func (m *pageMark) Alt() string {
	switch {
	case m.Name != nil:
		return m.Name.Value
	case m.Symbol != nil:
		return m.Symbol.Value
	}
	return "The organisation's logo"
}

// Source is where the mark's words came from, in a few words.
func (m *pageMark) Source() string {
	var chain, confirmed, curated bool
	for _, t := range []*pageMarkText{m.Name, m.Symbol} {
		switch {
		case t == nil:
		case t.Source == "curated":
			curated = true
		default:
			chain = true
			confirmed = confirmed || t.VerifiedBy != ""
		}
	}
	switch {
	case chain && curated:
		return "from the chain and petal's curated list"
	case chain && confirmed:
		return "from the chain, confirmed by petal's curated list"
	case chain:
		return "from the chain, unchecked"
	case curated:
		return "from petal's curated list"
	case m.Logo != nil:
		return "logo from the chain, unchecked"
	}
	return ""
}

// Detail is a name's or a symbol's whole provenance, for its hover text.
func (t *pageMarkText) Detail() string {
	if t.Source == "curated" {
		return "curated by " + t.VerifiedBy + " (checked " + day(t.At) + ")"
	}
	s := "read from the chain, " + t.Ref + ", " + day(t.At) + ": what the contract says of itself"
	if t.VerifiedBy != "" {
		s += "; the curated list says the same (" + t.VerifiedBy + ")"
	}
	return s
}

// LogoDetail is the logo's provenance, for its hover text.
func (m *pageMark) LogoDetail() string {
	return "logo read from the chain, " + m.Logo.Ref + ", " + day(m.Logo.At)
}

func day(at string) string {
	d, _, _ := strings.Cut(at, "T")
	return d
}
