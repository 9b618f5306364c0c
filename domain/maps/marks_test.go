package maps

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/png"
	"strings"
	"testing"
	"time"
)

func TestMarkPartsAreBoundedPlainText(t *testing.T) {
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"  Tether USD ", "Tether USD", true},
		{strings.Repeat("n", MaxMarkName), strings.Repeat("n", MaxMarkName), true},
		{strings.Repeat("n", MaxMarkName+1), "", false},
		{"two\nlines", "", false},
		{"evil\u202eflip", "", false},
		{"   ", "", false},
	} {
		got, err := CheckName(c.in)
		if (err == nil) != c.ok || got != c.want {
			t.Errorf("CheckName(%q) = %q, %v", c.in, got, err)
		}
	}
	if _, err := CheckSymbol(strings.Repeat("S", MaxMarkSymbol+1)); err == nil {
		t.Error("a symbol over 16 characters was kept")
	}
	if s, err := CheckSymbol("USDt"); err != nil || s != "USDt" {
		t.Errorf("USDt: %q %v", s, err)
	}
}

func TestParseAnswers(t *testing.T) {
	ft, err := ParseFTMetadata([]byte(`{"spec":"ft-1.0.0","name":"Tether USD","symbol":"USDt","icon":null,"decimals":6}`))
	if err != nil || ft != (FTMetadata{Name: "Tether USD", Symbol: "USDt"}) {
		t.Fatalf("%+v %v", ft, err)
	}
	if _, err := ParseFTMetadata([]byte(`"not an object"`)); err == nil {
		t.Fatal("a string read as ft_metadata")
	}
	meta := base64.StdEncoding.EncodeToString([]byte(`{"displayName":"Marketing Guild","flagLogo":"https://x/y.png"}`))
	cfg, err := ParseDAOConfig([]byte(`{"name":"marketing","purpose":"p","metadata":"` + meta + `"}`))
	if err != nil || cfg != (DAOConfig{Name: "marketing", DisplayName: "Marketing Guild"}) {
		t.Fatalf("%+v %v", cfg, err)
	}
	// Metadata that isn't base64 JSON leaves the name.
	cfg, err = ParseDAOConfig([]byte(`{"name":"marketing","metadata":"%%%"}`))
	if err != nil || cfg != (DAOConfig{Name: "marketing"}) {
		t.Fatalf("%+v %v", cfg, err)
	}
}

func pngOf(t *testing.T, w, h int) []byte {
	var b bytes.Buffer
	if err := png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestCheckIcon(t *testing.T) {
	good := pngOf(t, 8, 8)
	p, err := CheckIcon("data:image/png;base64," + base64.StdEncoding.EncodeToString(good))
	if err != nil || p.MediaType != "image/png" || len(p.SHA256) != 64 || !bytes.Equal(p.Bytes, good) {
		t.Fatalf("%+v %v", p, err)
	}
	for name, icon := range map[string]string{
		"svg":        "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(`<svg/>`)),
		"svg as png": "data:image/png;base64," + base64.StdEncoding.EncodeToString([]byte(`<svg xmlns="http://www.w3.org/2000/svg"/>`)),
		"web":        "https://example.com/logo.png",
		"too large":  "data:image/png;base64," + strings.Repeat("A", base64.StdEncoding.EncodedLen(MaxLogoBytes)+4),
		"not base64": "data:image/png;base64,!!!!",
		"truncated":  "data:image/png;base64," + base64.StdEncoding.EncodeToString(good[:len(good)-8]),
	} {
		if _, err := CheckIcon(icon); err == nil {
			t.Errorf("%s: kept", name)
		}
	}
}

func TestComposeTakesTheChainFirstThenTheList(t *testing.T) {
	at := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	list := &CuratedMark{Map: "near:mainnet:t.near", Name: "T Token", Symbol: "TT", VerifiedBy: "someone", Checked: "2026-11-29"}
	m := Compose(list.Map, ChainPart{Value: "T Token", Ref: "t.near ft_metadata"}, ChainPart{}, list, nil, at)
	if m.Name.Source != SourceChain || m.Name.Status != StatusRead || m.Name.VerifiedBy != "someone" || m.Name.At != "2026-11-30T12:00:00Z" {
		t.Fatalf("name %+v", m.Name)
	}
	if m.Symbol.Value != "TT" || m.Symbol.Source != SourceCurated || m.Symbol.Status != StatusCurated ||
		m.Symbol.Ref != "app/mapsapp/map-marks.json#near:mainnet:t.near" || m.Symbol.At != "2026-11-29T00:00:00Z" {
		t.Fatalf("symbol %+v", m.Symbol)
	}
	// The chain's word that differs from the list's stands, unverified.
	m = Compose(list.Map, ChainPart{Value: "Other", Ref: "r"}, ChainPart{}, list, nil, at)
	if m.Name.Value != "Other" || m.Name.VerifiedBy != "" {
		t.Fatalf("name %+v", m.Name)
	}
	if m := Compose("x", ChainPart{}, ChainPart{}, nil, nil, at); m.Name != nil || m.Symbol != nil || m.Logo != nil || m.ReadAt == "" {
		t.Fatalf("nothing known: %+v", m)
	}
}

func TestCheckCuratedRefusesBadLists(t *testing.T) {
	for name, list := range map[string]string{
		"twice":       `[{"map":"near:mainnet:a.near","name":"A","verified_by":"x","checked":"2026-11-30"},{"map":"near:mainnet:a.near","name":"A","verified_by":"x","checked":"2026-11-30"}]`,
		"no one":      `[{"map":"near:mainnet:a.near","name":"A","verified_by":"","checked":"2026-11-30"}]`,
		"nothing":     `[{"map":"near:mainnet:a.near","verified_by":"x","checked":"2026-11-30"}]`,
		"no address":  `[{"map":"near:mainnet:population","name":"A","verified_by":"x","checked":"2026-11-30"}]`,
		"long symbol": `[{"map":"near:mainnet:a.near","symbol":"SEVENTEEN_LETTERS","verified_by":"x","checked":"2026-11-30"}]`,
		"unknown":     `[{"map":"near:mainnet:a.near","name":"A","logo":"x","verified_by":"x","checked":"2026-11-30"}]`,
		"no day":      `[{"map":"near:mainnet:a.near","name":"A","verified_by":"x","checked":"soon"}]`,
	} {
		if _, err := CheckCurated([]byte(list)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestRefillKeepsTheChainsWordAndFillsFromTheList(t *testing.T) {
	at := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	listed := &CuratedMark{Map: "near:mainnet:a.near", Name: "A Listed", Symbol: "AL", VerifiedBy: "someone", Checked: "2026-11-30"}
	// Nothing before: the list alone.
	m, changed := Refill(listed.Map, nil, listed, at)
	if !changed || m.Name == nil || m.Name.Value != "A Listed" || m.Symbol.Source != SourceCurated {
		t.Fatalf("from nothing: %+v, %v", m, changed)
	}
	// Nothing before, nothing listed: no mark.
	if _, changed := Refill("near:mainnet:b.near", nil, nil, at); changed {
		t.Fatal("a mark from nothing")
	}
	// The chain's name kept with its own time; the list fills the symbol.
	prev := Compose(listed.Map, ChainPart{Value: "A Chain", Ref: "a.near ft_metadata"}, ChainPart{}, nil,
		&MarkLogo{SHA256: "s"}, at.Add(-time.Hour))
	m, changed = Refill(listed.Map, &prev, listed, at)
	if !changed || *m.Name != *prev.Name || m.Symbol == nil || m.Symbol.Value != "AL" || m.Logo != prev.Logo || m.ReadAt != prev.ReadAt {
		t.Fatalf("refilled: %+v (was %+v)", m, prev)
	}
	// Refilled again: the same.
	if _, changed := Refill(listed.Map, &m, listed, at.Add(time.Hour)); changed {
		t.Fatal("refilling the same mark changed it")
	}
}
