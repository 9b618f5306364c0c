package maps

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/profiles"
	"github.com/petal-near/petal/domain/published"
)

// A map's mark (board #85) is what tells its organisation from another: the
// organisation's name, its token's symbol and its logo, each with where it
// came from. The chain is read first; the curated list shipped in petal fills
// what the chain doesn't say.

// Limits of a mark's parts.
const (
	MaxMarkName   = 80 // characters of plain text
	MaxMarkSymbol = 16
	MaxLogoBytes  = 64 << 10
	MaxMarkRef    = 200
	// MaxMarkJSON bounds an encoded mark, well above what the limits allow.
	MaxMarkJSON = 4096
)

// Where a part of a mark came from (its source) and how far it is trusted
// (its status).
const (
	SourceChain   = "chain"   // the organisation's own contract, read at `at`
	SourceCurated = "curated" // petal's shipped list, app/mapsapp/map-marks.json
	// StatusRead is what the contract says of itself: nobody checked it.
	StatusRead = "read"
	// StatusCurated is an entry of the shipped list, checked by the person
	// its verified_by names.
	StatusCurated = "curated"
)

// LogoTypes are the media types a logo may be: the pictures the site's media
// route serves, and an SVG checked by CheckSVG (served where it runs nothing).
var LogoTypes = []string{profiles.PNG, profiles.JPEG, profiles.WebP, profiles.SVG}

// Mark is a map card's mark: { name, symbol, logo, read_at }.
type Mark struct {
	Name   *MarkText `json:"name"`
	Symbol *MarkText `json:"symbol"`
	Logo   *MarkLogo `json:"logo"`
	ReadAt string    `json:"read_at"`
}

// MarkText is a name or a symbol and where it came from.
type MarkText struct {
	Value      string `json:"value"`
	Status     string `json:"status"`
	Source     string `json:"source"`
	Ref        string `json:"ref"` // what was read: "<contract> <method>", or the list's entry
	VerifiedBy string `json:"verified_by,omitempty"`
	At         string `json:"at"`
}

// MarkLogo is a logo kept on this site, served at URL.
type MarkLogo struct {
	SHA256    string `json:"sha256"`
	MediaType string `json:"media_type"`
	Status    string `json:"status"`
	Source    string `json:"source"`
	Ref       string `json:"ref"`
	At        string `json:"at"`
	URL       string `json:"url"`
}

// Kinds of organisation a map's address can be, by the readers that read it.
const (
	KindToken = "token" // near-ft-balances: the address is the token contract
	KindDAO   = "dao"   // near-dao-members, near-dao-proposals: a Sputnik DAO
	KindPool  = "pool"  // near-staking-pool: curated only
	KindOther = ""
)

// KindOf is the kind a reader's readings say a map is.
func KindOf(network string) string {
	switch network {
	case "near-ft-balances":
		return KindToken
	case "near-dao-members", ProposalsNetwork:
		return KindDAO
	case "near-staking-pool":
		return KindPool
	}
	return KindOther
}

// Subject is a map whose mark can be read: its id, chain, address and kind.
type Subject struct {
	ID, Chain, Address, Kind string
}

// MarkRefusal says why something read is not kept in a mark.
type MarkRefusal struct{ Reason string }

func (e *MarkRefusal) Error() string { return e.Reason }

func refuseMark(format string, args ...any) *MarkRefusal {
	return &MarkRefusal{Reason: fmt.Sprintf(format, args...)}
}

// CheckName is a name as a mark keeps it, or why not: plain text on one
// line, at most MaxMarkName characters.
func CheckName(s string) (string, error) {
	s = strings.TrimSpace(s)
	if why := published.PlainText(s, MaxMarkName); why != "" {
		return "", refuseMark("the name %s", why)
	}
	return s, nil
}

// CheckSymbol is a token's symbol as a mark keeps it, or why not.
func CheckSymbol(s string) (string, error) {
	s = strings.TrimSpace(s)
	if why := published.PlainText(s, MaxMarkSymbol); why != "" {
		return "", refuseMark("the symbol %s", why)
	}
	return s, nil
}

// FTMetadata is what a fungible token says of itself (NEP-148 ft_metadata)
// that a mark keeps: each "" when absent.
type FTMetadata struct {
	Name, Symbol, Icon string
}

// ParseFTMetadata reads an ft_metadata answer.
func ParseFTMetadata(b []byte) (FTMetadata, error) {
	var m struct {
		Name   *string `json:"name"`
		Symbol *string `json:"symbol"`
		Icon   *string `json:"icon"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return FTMetadata{}, refuseMark("ft_metadata is not a NEP-148 answer: %v", err)
	}
	return FTMetadata{Name: deref(m.Name), Symbol: deref(m.Symbol), Icon: deref(m.Icon)}, nil
}

// DAOConfig is what a Sputnik DAO says of itself (get_config) that a mark
// keeps: its name, and the displayName of its base64 JSON metadata when it
// gives one. The metadata's flagLogo is a web address, never fetched.
type DAOConfig struct {
	Name, DisplayName string
}

// ParseDAOConfig reads a get_config answer. Metadata that isn't base64 JSON
// is ignored: the name is still the DAO's.
func ParseDAOConfig(b []byte) (DAOConfig, error) {
	var c struct {
		Name     *string `json:"name"`
		Metadata *string `json:"metadata"`
	}
	if err := json.Unmarshal(b, &c); err != nil {
		return DAOConfig{}, refuseMark("get_config is not a Sputnik DAO's answer: %v", err)
	}
	out := DAOConfig{Name: deref(c.Name)}
	if c.Metadata != nil && *c.Metadata != "" && len(*c.Metadata) <= 64<<10 {
		if raw, err := base64.StdEncoding.DecodeString(*c.Metadata); err == nil {
			var meta struct {
				DisplayName *string `json:"displayName"`
			}
			if json.Unmarshal(raw, &meta) == nil {
				out.DisplayName = deref(meta.DisplayName)
			}
		}
	}
	return out, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// CuratedMark is one entry of the shipped list: a map's name and symbol as
// someone checked them.
type CuratedMark struct {
	Map        string `json:"map"`
	Name       string `json:"name,omitempty"`
	Symbol     string `json:"symbol,omitempty"`
	VerifiedBy string `json:"verified_by"`
	Checked    string `json:"checked"` // the day it was checked, YYYY-MM-DD
}

// CheckCurated reads the shipped list: each map in its one form, once, with
// a name or a symbol, each within its limits, and who checked it and when.
func CheckCurated(b []byte) (map[string]CuratedMark, error) {
	var list []CuratedMark
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&list); err != nil {
		return nil, fmt.Errorf("the curated marks: %w", err)
	}
	out := make(map[string]CuratedMark, len(list))
	for i, e := range list {
		at := fmt.Sprintf("the curated marks' entry %d (%s)", i, e.Map)
		if _, address, ok := SplitID(e.Map); !ok || address == "" || NormaliseID(e.Map) != e.Map {
			return nil, fmt.Errorf("%s: map must be a map id in its one form, <chain>:<address>", at)
		}
		if _, dup := out[e.Map]; dup {
			return nil, fmt.Errorf("%s: listed twice", at)
		}
		if e.Name == "" && e.Symbol == "" {
			return nil, fmt.Errorf("%s: gives neither a name nor a symbol", at)
		}
		if e.Name != "" {
			if v, err := CheckName(e.Name); err != nil || v != e.Name {
				return nil, fmt.Errorf("%s: %v", at, err)
			}
		}
		if e.Symbol != "" {
			if v, err := CheckSymbol(e.Symbol); err != nil || v != e.Symbol {
				return nil, fmt.Errorf("%s: %v", at, err)
			}
		}
		if why := published.PlainText(e.VerifiedBy, MaxMarkRef); why != "" {
			return nil, fmt.Errorf("%s: verified_by %s", at, why)
		}
		if _, err := time.Parse(time.DateOnly, e.Checked); err != nil {
			return nil, fmt.Errorf("%s: checked must be a day, YYYY-MM-DD", at)
		}
		out[e.Map] = e
	}
	return out, nil
}

// CuratedRef is how a mark names the list entry a part came from.
func CuratedRef(id string) string { return "app/mapsapp/map-marks.json#" + id }

// ChainRef is how a mark names the call a part came from.
func ChainRef(contract, method string) string { return contract + " " + method }

// ChainPart is a name or a symbol read from the chain: its value and the
// call it came from.
type ChainPart struct {
	Value string
	Ref   string
	// At is when it was read ("" for the mark's own time): a part kept from
	// an earlier read keeps its own.
	At string
}

// Compose makes a mark: each part from the chain first, then the curated
// entry (nil for none). A curated entry that says the same as the chain
// lends the chain's part its verified_by. logo is nil for none.
func Compose(id string, name, symbol ChainPart, curated *CuratedMark, logo *MarkLogo, at time.Time) Mark {
	when := at.UTC().Format(time.RFC3339)
	part := func(chain ChainPart, listed string) *MarkText {
		switch {
		case chain.Value != "":
			at := when
			if chain.At != "" {
				at = chain.At
			}
			t := &MarkText{Value: chain.Value, Status: StatusRead, Source: SourceChain, Ref: chain.Ref, At: at}
			if curated != nil && listed == chain.Value {
				t.VerifiedBy = curated.VerifiedBy
			}
			return t
		case listed != "":
			return &MarkText{Value: listed, Status: StatusCurated, Source: SourceCurated, Ref: CuratedRef(id),
				VerifiedBy: curated.VerifiedBy, At: curated.Checked + "T00:00:00Z"}
		}
		return nil
	}
	var listedName, listedSymbol string
	if curated != nil {
		listedName, listedSymbol = curated.Name, curated.Symbol
	}
	return Mark{Name: part(name, listedName), Symbol: part(symbol, listedSymbol), Logo: logo, ReadAt: when}
}

// Refill is the mark a map has when its chain could not be read: what an
// earlier read got from the chain (its parts and logo, each with its own
// time) kept, and the curated entry (nil for none) filling the rest. prev is
// nil when the map had none. changed is false when it is prev as it was.
func Refill(id string, prev *Mark, curated *CuratedMark, at time.Time) (m Mark, changed bool) {
	var name, symbol ChainPart
	var logo *MarkLogo
	if prev != nil {
		name, symbol, logo = chainPart(prev.Name), chainPart(prev.Symbol), prev.Logo
	}
	m = Compose(id, name, symbol, curated, logo, at)
	if prev == nil {
		return m, m.Name != nil || m.Symbol != nil
	}
	m.ReadAt = prev.ReadAt
	return m, !sameText(m.Name, prev.Name) || !sameText(m.Symbol, prev.Symbol)
}

func chainPart(t *MarkText) ChainPart {
	if t == nil || t.Source != SourceChain {
		return ChainPart{}
	}
	return ChainPart{Value: t.Value, Ref: t.Ref, At: t.At}
}

func sameText(a, b *MarkText) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// LogoPicture is a logo checked to be a picture the site keeps: its bytes,
// under their SHA-256.
type LogoPicture struct {
	SHA256        string
	MediaType     string
	Bytes         []byte
	Width, Height int
}

// CheckIcon decodes and checks a token's icon, a data: URL of at most
// MaxLogoBytes: an SVG (base64 or percent-encoded) as CheckSVG checks it, a
// PNG, JPEG or WebP as the site's pictures are checked
// (profiles.CheckPicture: the type its bytes say, no markup or second file
// hidden inside, pixels that decode). Anything else is refused; so is a web
// address (never fetched).
func CheckIcon(icon string) (LogoPicture, error) {
	if !profiles.IsDataURL(icon) {
		return LogoPicture{}, refuseMark("the icon is not a data: URL (a web address is never fetched)")
	}
	head, payload, ok := strings.Cut(icon[len("data:"):], ",")
	if !ok {
		return LogoPicture{}, refuseMark("the icon: a data: URL without a comma before its data")
	}
	if mediaType, _, _ := strings.Cut(strings.ToLower(head), ";"); strings.TrimSpace(mediaType) == profiles.SVG {
		data, err := decodeSVGDataURL(head, payload)
		if err != nil {
			return LogoPicture{}, err
		}
		return CheckSVG(data)
	}
	if len(payload) > base64.StdEncoding.EncodedLen(MaxLogoBytes) {
		return LogoPicture{}, refuseMark("the icon is over %d KiB (%d base64 characters)", MaxLogoBytes>>10, len(payload))
	}
	declared, data, err := profiles.DecodeDataURL(icon)
	if err != nil {
		return LogoPicture{}, refuseMark("the icon: %v", err)
	}
	if len(data) > MaxLogoBytes {
		return LogoPicture{}, refuseMark("the icon is over %d KiB (%d bytes)", MaxLogoBytes>>10, len(data))
	}
	p, err := profiles.CheckPicture(declared, data)
	if err != nil {
		return LogoPicture{}, refuseMark("the icon: %v", err)
	}
	return LogoPicture{SHA256: p.SHA256, MediaType: p.MediaType, Bytes: p.Bytes, Width: p.Width, Height: p.Height}, nil
}

// decodeIconBase64 is an icon's base64 payload, bounded before it is decoded.
func decodeIconBase64(payload string) ([]byte, error) {
	if len(payload) > base64.StdEncoding.EncodedLen(MaxLogoBytes) {
		return nil, refuseMark("the icon is over %d KiB (%d base64 characters)", MaxLogoBytes>>10, len(payload))
	}
	data, err := base64.StdEncoding.Strict().DecodeString(payload)
	if err != nil {
		return nil, refuseMark("the icon's base64 is not valid: %v", err)
	}
	return data, nil
}

// LogoOf is the mark's logo for a kept picture read from ref at at.
func LogoOf(p LogoPicture, source, status, ref string, at time.Time) *MarkLogo {
	return &MarkLogo{SHA256: p.SHA256, MediaType: p.MediaType, Status: status, Source: source, Ref: ref,
		At: at.UTC().Format(time.RFC3339), URL: profiles.MediaAddress(p.SHA256, p.MediaType)}
}
