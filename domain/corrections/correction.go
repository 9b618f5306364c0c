// Package corrections is a person saying a published flower is wrong
// (correction/v1): which flower, what kind of wrong (a stale reading, a
// misleading label, a mis-assigned group, or other), why, and the evidence
// in a claim's terms (what is wrong, what is right, links). Like a flower it
// is written by its maker's own transaction to SocialDB, under their
// account at petal/correction/<id>, its id the SHA-256 of its canonical
// JSON. A correction never changes the flower it names: it is shown beside
// it.
package corrections

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/published"
)

// Schema is the format id every correction carries.
const Schema = "correction/v1"

// Kinds of wrong a correction names.
const (
	StaleReading     = "stale_reading"     // the reading is old: the chain holds something else now
	MisleadingLabel  = "misleading_label"  // the title, a name or a group's label says something untrue
	MisassignedGroup = "misassigned_group" // an account is drawn in a group it isn't in
	Other            = "other"
)

// Kinds lists the kinds in the order the docs give them.
var Kinds = []string{StaleReading, MisleadingLabel, MisassignedGroup, Other}

// kindLabels are the kinds in words, for pages.
var kindLabels = map[string]string{StaleReading: "Stale reading", MisleadingLabel: "Misleading label",
	MisassignedGroup: "Mis-assigned group", Other: "Correction"}

// KindLabel is a kind in words ("Correction" for one not known).
func KindLabel(kind string) string {
	if l, ok := kindLabels[kind]; ok {
		return l
	}
	return kindLabels[Other]
}

// Bounds (docs/publishing.md, "Corrections").
const (
	MaxReason   = 500 // characters
	MaxClaim    = 500 // characters of what is wrong, and of what is right
	MaxLinks    = 8
	MaxLinkSize = 512 // bytes of one link
	// MaxRecordBytes bounds a record as published: the texts at their
	// longest in four-byte characters and every link fit with room to spare.
	MaxRecordBytes = 16 << 10
)

// Correction is one correction/v1 record. Its canonical JSON is what is
// written to SocialDB as a string, and its SHA-256 is its id.
type Correction struct {
	Schema   string   `json:"schema"`
	Flower   string   `json:"flower"` // the id of the flower/v1 it corrects
	Kind     string   `json:"kind"`
	Reason   string   `json:"reason"`
	Evidence Evidence `json:"evidence"`
	// Subject is the account the correction is about, CAIP-10, when it is
	// about one petal (a mis-assigned group, say).
	Subject string `json:"subject,omitempty"`
	MadeBy  string `json:"made_by"` // the NEAR account that publishes it
	MadeAt  string `json:"made_at"` // RFC 3339, UTC
}

// Evidence is what the correction rests on, as a claim's: what the flower
// says that is wrong, what is right, and links that show it.
type Evidence struct {
	Wrong string   `json:"wrong"`
	Right string   `json:"right"`
	Links []string `json:"links"`
}

// Canonical is the record's canonical JSON and its id.
func (c Correction) Canonical() (id string, canonical []byte, err error) {
	if c.Evidence.Links == nil {
		c.Evidence.Links = []string{}
	}
	return canon.SHA256Hex(c)
}

// KeyPath is where a correction is written in SocialDB: under its maker's
// account, at petal/correction/<id>, beside their flowers.
func KeyPath(account, id string) string { return account + "/petal/correction/" + id }

// KeyPrefix is what follows an account in a correction's key.
const KeyPrefix = "petal/correction/"

// ParseKey reads <account>/petal/correction/<id>.
func ParseKey(path string) (account, id string, ok bool) {
	account, rest, _ := strings.Cut(path, "/")
	id, found := strings.CutPrefix(rest, KeyPrefix)
	return account, id, found && published.ValidNearAccount(account) && published.ValidID(id)
}

// Check validates a record beyond its shape. It returns the problems at
// JSON Pointer paths, in path order.
func Check(c Correction) []errs.Problem {
	var p []errs.Problem
	add := func(path, msg string) { p = append(p, errs.Problem{Path: path, Message: msg}) }
	if c.Schema != Schema {
		add("/schema", fmt.Sprintf("must be %q", Schema))
	}
	if !published.ValidID(c.Flower) {
		add("/flower", "must be a published flower's id: 64 lower-case hex digits")
	}
	if !slices.Contains(Kinds, c.Kind) {
		add("/kind", "must be one of "+strings.Join(Kinds, ", "))
	}
	if why := published.PlainText(c.Reason, MaxReason); why != "" {
		add("/reason", why)
	}
	if why := published.PlainText(c.Evidence.Wrong, MaxClaim); why != "" {
		add("/evidence/wrong", why)
	}
	if why := published.PlainText(c.Evidence.Right, MaxClaim); why != "" {
		add("/evidence/right", why)
	}
	if len(c.Evidence.Links) > MaxLinks {
		add("/evidence/links", fmt.Sprintf("has %d links; at most %d", len(c.Evidence.Links), MaxLinks))
	} else {
		for i, l := range c.Evidence.Links {
			if why := CheckLink(l); why != "" {
				add(fmt.Sprintf("/evidence/links/%d", i), why)
			}
		}
	}
	if c.Subject != "" && !claims.ValidCAIP10(c.Subject) {
		add("/subject", "must be an account, CAIP-10 (near:mainnet:alice.near)")
	}
	if !published.ValidNearAccount(c.MadeBy) {
		add("/made_by", "must be a NEAR account id")
	}
	if t, err := time.Parse(time.RFC3339, c.MadeAt); err != nil || !strings.HasSuffix(c.MadeAt, "Z") || t.Year() < 2020 {
		add("/made_at", "must be a time in RFC 3339, UTC (2026-11-30T12:00:00Z)")
	}
	return p
}

// CheckLink says why l is not a link a correction may carry, or "": an
// absolute https URL with a host, no user or password, at most MaxLinkSize
// bytes of printable ASCII (a page shows it as a link, so no other scheme
// can run anything).
func CheckLink(l string) string {
	if l == "" || len(l) > MaxLinkSize {
		return fmt.Sprintf("must be 1 to %d bytes", MaxLinkSize)
	}
	for i := 0; i < len(l); i++ {
		if l[i] <= ' ' || l[i] >= 0x7f {
			return "must be printable ASCII with no spaces (percent-encode the rest)"
		}
	}
	u, err := url.Parse(l)
	switch {
	case err != nil:
		return "is not a URL"
	case u.Scheme != "https":
		return "must be an https:// link"
	case u.Host == "" || u.Opaque != "":
		return "must name a host (https://host/…)"
	case u.User != nil:
		return "must not carry a user or password"
	}
	return ""
}

// Parse reads a record as it was published (a JSON text) strictly: no
// duplicate or unknown members, no trailing data, and Check's rules. It gives
// the record, its id and its canonical bytes; a record with problems is
// never kept.
func Parse(raw []byte) (c Correction, id string, canonical []byte, problems []errs.Problem) {
	if len(raw) > MaxRecordBytes {
		return Correction{}, "", nil, []errs.Problem{{Path: "", Message: fmt.Sprintf("is %d bytes; a correction/v1 record is at most %d", len(raw), MaxRecordBytes)}}
	}
	// Canonicalising first refuses invalid UTF-8, lone surrogates, duplicate
	// member names and trailing data, which encoding/json would let through.
	canonical, err := canon.Transform(raw)
	if err != nil {
		return Correction{}, "", nil, []errs.Problem{{Path: "", Message: "is not one JSON text: " + err.Error()}}
	}
	var shape struct {
		Schema   *string `json:"schema"`
		Flower   *string `json:"flower"`
		Kind     *string `json:"kind"`
		Reason   *string `json:"reason"`
		Evidence *struct {
			Wrong *string   `json:"wrong"`
			Right *string   `json:"right"`
			Links *[]string `json:"links"`
		} `json:"evidence"`
		Subject *string `json:"subject"`
		MadeBy  *string `json:"made_by"`
		MadeAt  *string `json:"made_at"`
	}
	dec := json.NewDecoder(bytes.NewReader(canonical))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&shape); err != nil {
		return Correction{}, "", nil, []errs.Problem{{Path: "", Message: "is not a correction/v1 object: " + err.Error()}}
	}
	required := map[string]*string{"/schema": shape.Schema, "/flower": shape.Flower, "/kind": shape.Kind, "/reason": shape.Reason,
		"/made_by": shape.MadeBy, "/made_at": shape.MadeAt}
	if shape.Evidence == nil {
		problems = append(problems, errs.Problem{Path: "/evidence", Message: "is required"})
	} else {
		required["/evidence/wrong"], required["/evidence/right"] = shape.Evidence.Wrong, shape.Evidence.Right
		if shape.Evidence.Links == nil {
			problems = append(problems, errs.Problem{Path: "/evidence/links", Message: "is required (none: [])"})
		}
	}
	for path, v := range required {
		if v == nil {
			problems = append(problems, errs.Problem{Path: path, Message: "is required"})
		}
	}
	if shape.Subject != nil && *shape.Subject == "" {
		problems = append(problems, errs.Problem{Path: "/subject", Message: "must not be empty: leave it out for none"})
	}
	if len(problems) > 0 {
		slices.SortFunc(problems, func(a, b errs.Problem) int { return strings.Compare(a.Path, b.Path) })
		return Correction{}, "", nil, problems
	}
	c = Correction{Schema: *shape.Schema, Flower: *shape.Flower, Kind: *shape.Kind, Reason: *shape.Reason,
		Evidence: Evidence{Wrong: *shape.Evidence.Wrong, Right: *shape.Evidence.Right, Links: *shape.Evidence.Links},
		MadeBy:   *shape.MadeBy, MadeAt: *shape.MadeAt}
	if shape.Subject != nil {
		c.Subject = *shape.Subject
	}
	if problems = Check(c); len(problems) > 0 {
		return Correction{}, "", nil, problems
	}
	id, canonical, err = c.Canonical()
	if err != nil {
		return Correction{}, "", nil, []errs.Problem{{Path: "", Message: "could not be canonicalised"}}
	}
	return c, id, canonical, nil
}

// Invalid is the bad_input error for a correction that is not a valid
// correction/v1: the first problem in its message, all of them in problems.
func Invalid(problems []errs.Problem) *errs.Error {
	msg := "the correction is not a valid correction/v1"
	if len(problems) > 0 {
		path := problems[0].Path
		if path == "" {
			path = "the record"
		}
		msg += ": " + path + ": " + problems[0].Message
	}
	e := errs.New(errs.BadInput, msg, "see docs/schemas/correction-v1.schema.json")
	e.Problems = problems
	return e
}

// How a kept correction came.
const (
	CameSubmitted = "submitted" // read back on submit_correction
	CameSynced    = "synced"    // found by the SocialDB sync
)

// Kept is a correction as this site keeps it: the record's bytes exactly as
// SocialDB holds them, and what the flower's answer orders and shows.
type Kept struct {
	ID      string
	Flower  string
	Network string // where it is published: the flower's network
	Maker   string // the SocialDB account it is under (the record's made_by)
	Kind    string
	Record  []byte // as published
	MadeAt  time.Time
	KeptAt  time.Time // when this site first kept it; set by the store
	Came    string
}

// MaxShown is how many corrections a flower's answer carries, newest first;
// its count says how many there are, up to MaxCounted (a count reads every
// correction it counts, so it stops there).
const (
	MaxShown   = 20
	MaxCounted = 10_000
)

// Read checks a record read from SocialDB at KeyPath(account, id): a valid
// correction/v1 whose id is its key and whose made_by is the account it is
// under. Submitting one and the map's sync take a record by the same rule.
func Read(account, id string, value []byte) (Correction, *errs.Error) {
	c, gotID, _, problems := Parse(value)
	if len(problems) > 0 {
		return Correction{}, Invalid(problems)
	}
	if gotID != id || c.MadeBy != account {
		return Correction{}, errs.Newf(errs.BadInput, "the record at %s is not a correction of %s under its own id (its id is %s, its made_by %s)",
			KeyPath(account, id), account, gotID, c.MadeBy).
			WithHint("a record's id is the SHA-256 of its canonical JSON, and its made_by the account it is under")
	}
	return c, nil
}

// Keeping is what is kept of c, read on network under its maker's account,
// about a flower published on flowerNetwork: a correction of a flower is
// written where the flower is published, so one read on another network is
// refused.
func Keeping(c Correction, id, network, flowerNetwork string, value []byte, came string) (Kept, *errs.Error) {
	if flowerNetwork != network {
		return Kept{}, errs.Newf(errs.BadInput, "the flower %s is published on %s: a correction of it is written there, not on %s", c.Flower, flowerNetwork, network)
	}
	madeAt, _ := time.Parse(time.RFC3339, c.MadeAt) // Parse checked it
	return Kept{ID: id, Flower: c.Flower, Network: network, Maker: c.MadeBy, Kind: c.Kind, Record: value, MadeAt: madeAt.UTC(), Came: came}, nil
}
