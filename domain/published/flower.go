// Package published is a flower published to NEAR (flower/v1): the record a
// person writes to SocialDB under their own account with their own signed
// transaction, its validation, its id (the SHA-256 of its canonical JSON,
// RFC 8785) and the map it belongs to. The server holds no key: it prepares
// the record, and keeps it once it reads it back from the chain.
package published

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/specs"
)

// Schema is the format id every published flower carries.
const Schema = "flower/v1"

// Bounds on a record's text, in characters.
const (
	MaxName  = 80
	MaxAbout = 500
	// MaxRecordBytes bounds a record as published: a spec is small (a title,
	// at most 64 groups), so anything past this is not a flower petal wrote.
	MaxRecordBytes = 32 << 10
)

// Flower is one flower/v1 record. Its canonical JSON is what is written to
// SocialDB as a string, and its SHA-256 is its id.
type Flower struct {
	Schema   string     `json:"schema"`
	Spec     specs.Spec `json:"spec"`     // flower-spec/v1, inline
	Snapshot string     `json:"snapshot"` // the sha256 of the snapshot it draws; the spec's own
	Name     string     `json:"name,omitempty"`
	About    string     `json:"about"`   // what was read and where, in people's words
	Map      string     `json:"map"`     // <chain>:<address> or <chain>:population
	MadeBy   string     `json:"made_by"` // the NEAR account that publishes it
	MadeAt   string     `json:"made_at"` // RFC 3339, UTC
}

// Canonical is the record's canonical JSON and its id.
func (f Flower) Canonical() (id string, canonical []byte, err error) {
	if f.Spec.Petals.Groups == nil {
		f.Spec.Petals.Groups = []string{}
	}
	return canon.SHA256Hex(f)
}

var (
	sha256Hex = regexp.MustCompile(`^[0-9a-f]{64}$`)
	// CAIP-2 chain ids and CAIP-10 addresses, as snapshots write them.
	caip2      = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}$`)
	caip10Addr = regexp.MustCompile(`^[-.%a-zA-Z0-9]{1,128}$`)
	evmAddress = regexp.MustCompile(`^0x[0-9a-f]{40}$`)
	// nearAccount is NEAR's account id rule (nearcore's validation).
	nearAccount = regexp.MustCompile(`^(([a-z\d]+[\-_])*[a-z\d]+\.)*([a-z\d]+[\-_])*[a-z\d]+$`)
)

// Population is the address of a map of a whole network.
const Population = "population"

// ValidID reports whether id has an id's form (64 lower-case hex digits).
func ValidID(id string) bool { return sha256Hex.MatchString(id) }

// ValidNearAccount reports whether id is a valid NEAR account id.
func ValidNearAccount(id string) bool {
	return len(id) >= 2 && len(id) <= 64 && nearAccount.MatchString(id)
}

// SplitMap splits a map id into its chain (CAIP-2) and address; address is
// Population for a whole network. ok is false for anything else: an EVM
// address must be lower case, a NEAR one a valid account id.
func SplitMap(id string) (chain, address string, ok bool) {
	if len(id) > 200 {
		return "", "", false
	}
	// The chain is namespace:reference; the address is what follows.
	ns, rest, ok1 := strings.Cut(id, ":")
	ref, addr, ok2 := strings.Cut(rest, ":")
	if !ok1 || !ok2 {
		return "", "", false
	}
	chain = ns + ":" + ref
	if !caip2.MatchString(chain) {
		return "", "", false
	}
	switch {
	case addr == Population:
	case ns == "near":
		if !ValidNearAccount(addr) {
			return "", "", false
		}
	case ns == "eip155":
		if !evmAddress.MatchString(addr) {
			return "", "", false
		}
	case !caip10Addr.MatchString(addr):
		return "", "", false
	}
	return chain, addr, true
}

// MapOf is the map a reading belongs to: the address its params name (a
// DAO, a pool, a token or a contract) on its chain, or the chain's whole
// population when it names none. An EVM address is written in lower case.
func MapOf(chain string, params json.RawMessage) string {
	var p struct {
		DAO      string `json:"dao"`
		Pool     string `json:"pool"`
		Token    string `json:"token"`
		Contract string `json:"contract"`
		Address  string `json:"address"`
	}
	// Readers' params are objects; anything else names no address.
	_ = json.Unmarshal(params, &p)
	addr := Population
	for _, a := range []string{p.DAO, p.Pool, p.Token, p.Contract, p.Address} {
		if a != "" {
			addr = a
			break
		}
	}
	if strings.HasPrefix(chain, "eip155:") {
		addr = strings.ToLower(addr)
	}
	return chain + ":" + addr
}

// PlainText reports why s is not plain text of at most max characters on one
// line, or "" when it is: no control characters, no bidirectional
// overrides, not blank.
func PlainText(s string, max int) string {
	if !utf8.ValidString(s) {
		return "must be UTF-8 text"
	}
	if n := utf8.RuneCountInString(s); n > max {
		return fmt.Sprintf("must be at most %d characters, not %d", max, n)
	}
	if strings.TrimSpace(s) == "" {
		return "must not be blank"
	}
	for _, r := range s {
		switch {
		case unicode.IsControl(r):
			return "must be plain text on one line: no control characters"
		case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069, r == 0x2028, r == 0x2029:
			return "must be plain text: no line separators or bidirectional overrides"
		}
	}
	return ""
}

// Check validates a record beyond its shape: its schema, its spec, the
// snapshot the spec draws, its name, about, map, maker and time. It returns
// at most a few problems at JSON Pointer paths.
func Check(f Flower) []errs.Problem {
	var p []errs.Problem
	add := func(path, msg string) { p = append(p, errs.Problem{Path: path, Message: msg}) }
	if f.Schema != Schema {
		add("/schema", fmt.Sprintf("must be %q", Schema))
	}
	if !sha256Hex.MatchString(f.Snapshot) {
		add("/snapshot", "must be a snapshot's sha256: 64 lower-case hex digits")
	} else if f.Spec.Snapshot != f.Snapshot {
		add("/snapshot", "must be the snapshot the spec draws")
	}
	if f.Name != "" {
		if why := PlainText(f.Name, MaxName); why != "" {
			add("/name", why)
		}
	}
	if why := PlainText(f.About, MaxAbout); why != "" {
		add("/about", why)
	}
	if _, _, ok := SplitMap(f.Map); !ok {
		add("/map", "must be a map's id: <chain>:<address> (near:mainnet:marketing.sputnik-dao.near) or <chain>:population")
	}
	if !ValidNearAccount(f.MadeBy) {
		add("/made_by", "must be a NEAR account id")
	}
	if t, err := time.Parse(time.RFC3339, f.MadeAt); err != nil || !strings.HasSuffix(f.MadeAt, "Z") || t.Year() < 2020 {
		add("/made_at", "must be a time in RFC 3339, UTC (2026-11-30T12:00:00Z)")
	}
	return p
}

// Parse reads a record as it was published (a JSON text) strictly: no
// duplicate or unknown members, no trailing data, a flower-spec/v1 spec, and
// Check's rules. It gives the record, its id and its canonical bytes.
// Problems name where the record is wrong; a record with problems is never
// kept.
func Parse(raw []byte) (f Flower, id string, canonical []byte, problems []errs.Problem) {
	if len(raw) > MaxRecordBytes {
		return Flower{}, "", nil, []errs.Problem{{Path: "", Message: fmt.Sprintf("is %d bytes; a flower/v1 record is at most %d", len(raw), MaxRecordBytes)}}
	}
	// Canonicalising first refuses invalid UTF-8, lone surrogates, duplicate
	// member names and trailing data, which encoding/json would let through.
	canonical, err := canon.Transform(raw)
	if err != nil {
		return Flower{}, "", nil, []errs.Problem{{Path: "", Message: "is not one JSON text: " + err.Error()}}
	}
	var shape struct {
		Schema   *string         `json:"schema"`
		Spec     json.RawMessage `json:"spec"`
		Snapshot *string         `json:"snapshot"`
		Name     *string         `json:"name"`
		About    *string         `json:"about"`
		Map      *string         `json:"map"`
		MadeBy   *string         `json:"made_by"`
		MadeAt   *string         `json:"made_at"`
	}
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&shape); err != nil {
		return Flower{}, "", nil, []errs.Problem{{Path: "", Message: "is not a flower/v1 object: " + plain(err)}}
	}
	for path, v := range map[string]*string{"/schema": shape.Schema, "/snapshot": shape.Snapshot, "/about": shape.About,
		"/map": shape.Map, "/made_by": shape.MadeBy, "/made_at": shape.MadeAt} {
		if v == nil {
			problems = append(problems, errs.Problem{Path: path, Message: "is required"})
		}
	}
	if shape.Name != nil && *shape.Name == "" {
		problems = append(problems, errs.Problem{Path: "/name", Message: "must not be empty: leave it out for no name"})
	}
	if len(shape.Spec) == 0 {
		problems = append(problems, errs.Problem{Path: "/spec", Message: "is required"})
	} else {
		spec, sp := specs.ParseSpec(shape.Spec)
		for _, q := range sp {
			problems = append(problems, errs.Problem{Path: "/spec" + q.Path, Message: q.Message})
		}
		f.Spec = spec
	}
	if len(problems) > 0 {
		slices.SortFunc(problems, func(a, b errs.Problem) int { return strings.Compare(a.Path, b.Path) })
		return Flower{}, "", nil, problems
	}
	f.Schema, f.Snapshot, f.About, f.Map, f.MadeBy, f.MadeAt = *shape.Schema, *shape.Snapshot, *shape.About, *shape.Map, *shape.MadeBy, *shape.MadeAt
	if shape.Name != nil {
		f.Name = *shape.Name
	}
	if problems = Check(f); len(problems) > 0 {
		return Flower{}, "", nil, problems
	}
	// The id names the record's canonical form: the same record written with
	// other spacing or member order is the same flower.
	id, canonical, err = f.Canonical()
	if err != nil {
		return Flower{}, "", nil, []errs.Problem{{Path: "", Message: "could not be canonicalised"}}
	}
	return f, id, canonical, nil
}

// Invalid is the bad_input error for a record that is not a valid flower/v1.
func Invalid(problems []errs.Problem) *errs.Error {
	msg := "the record is not a valid flower/v1"
	if len(problems) > 0 {
		path := problems[0].Path
		if path == "" {
			path = "the record"
		}
		msg += ": " + path + ": " + problems[0].Message
	}
	e := errs.New(errs.BadInput, msg, "see docs/schemas/flower-v1.schema.json")
	e.Problems = problems
	return e
}

func plain(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return fmt.Sprintf("%s must be a %s", ute.Field, ute.Type.Kind())
	}
	return err.Error()
}

// SocialDB is where flowers are published on each NEAR network: NEAR
// Social's key-value contract.
var socialDB = map[string]string{
	"near:mainnet": "social.near",
	"near:testnet": "v1.social08.testnet",
}

// SocialDBContract is the SocialDB contract of a NEAR network.
func SocialDBContract(network string) (string, bool) {
	c, ok := socialDB[network]
	return c, ok
}

// KeyPath is where a flower is written in SocialDB: under its maker's
// account, at petal/flower/<id>.
func KeyPath(account, id string) string { return account + "/petal/flower/" + id }

// FlowerKeys is the SocialDB pattern of every account's flowers.
const FlowerKeys = "*/petal/flower/*"

// SpecName is the name of the spec inside a record already checked (one
// kept here): a list reads it for each flower, so it decodes the spec alone
// and checks nothing, where Parse checks everything.
func SpecName(record []byte) (string, error) {
	var r struct {
		Spec specs.Spec `json:"spec"`
	}
	if err := json.Unmarshal(record, &r); err != nil {
		return "", err
	}
	sha, _, err := specs.Name(r.Spec)
	return sha, err
}
