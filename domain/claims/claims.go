// Package claims is what people and their agents say about accounts
// (annotations, claim/v2) and what the site itself publishes about the map's
// accounts (claim/v3): a subject (CAIP-10), a verb, an object, a kind, who
// answers for it (by) and the evidence. A claim is named by the SHA-256 of
// its canonical JSON, so the same claim sent twice is kept once.
package claims

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
)

// Formats.
const (
	SchemaV2 = "claim/v2" // an annotation, kept privately under its owner
	SchemaV3 = "claim/v3" // a claim the site publishes (checked, shipped in the repo)
)

// Kinds of claim: how its author knows it.
const (
	Stated   = "stated"   // someone said so (the person, or what they told their agent)
	Observed = "observed" // read from the chain or a source, as it is
	Inferred = "inferred" // concluded from evidence by a method
)

// Kinds lists the kinds, in the order the docs give them.
var Kinds = []string{Stated, Observed, Inferred}

// Verbs with a meaning the site reads.
const (
	VerbNamed = "named" // object { value }: the name a person gives an account, drawn on their petals
	VerbNoted = "noted" // object { value }: a note about an account
)

// Limits of one annotation and of a request (docs/annotations.md).
const (
	MaxPerRequest   = 100     // annotations in one request
	MaxObjectBytes  = 4 << 10 // an object's JSON
	MaxEvidence     = 16      // evidence items
	MaxEvidenceSize = 8 << 10 // the evidence's JSON
	MaxNameChars    = 128     // a named claim's value
	MaxNoteChars    = 2000    // a noted claim's value
	MaxPerProject   = 1000    // annotations kept in one project (or one person's, in none)
	MaxByChars      = 200     // by and via
)

var (
	// CAIP-10: namespace:reference:address (chain-agnostic account id).
	caip10Pattern = regexp.MustCompile(`^[-a-z0-9]{3,8}:[-_a-zA-Z0-9]{1,32}:[-.%a-zA-Z0-9_]{1,128}$`)
	verbPattern   = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	asPattern     = regexp.MustCompile(`^[a-z0-9][-a-z0-9_]{0,31}$`)
	idPattern     = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// ValidCAIP10 reports whether s is a CAIP-10 account id.
func ValidCAIP10(s string) bool { return caip10Pattern.MatchString(s) }

// ValidID reports whether s can be a claim's id (64 lower-case hex digits).
func ValidID(s string) bool { return idPattern.MatchString(s) }

// ValidAs reports whether s names an agent for by (tool:<as>@1).
func ValidAs(s string) bool { return asPattern.MatchString(s) }

// ToolBy is who answers for a claim sent through a continue link by agent as.
func ToolBy(as string) string { return "tool:" + as + "@1" }

// Input is a claim/v2 as sent: without id and by, which the site fills.
type Input struct {
	Subject  string          `json:"subject" jsonschema:"the account the claim is about, CAIP-10 (near:mainnet:alice.near)"`
	Verb     string          `json:"verb" jsonschema:"what is said of it: named, noted, or another lower-case word"`
	Object   json.RawMessage `json:"object" jsonschema:"what is said, a JSON object; named and noted take { value }"`
	Kind     string          `json:"kind" jsonschema:"how it is known: stated, observed or inferred"`
	Evidence json.RawMessage `json:"evidence,omitempty" jsonschema:"why: a JSON array of at most 16 items (none: [])"`
}

// Claim is one claim/v2 as kept and answered.
type Claim struct {
	Schema   string          `json:"schema"`
	ID       string          `json:"id"`
	Subject  string          `json:"subject"`
	Verb     string          `json:"verb"`
	Object   json.RawMessage `json:"object"`
	Kind     string          `json:"kind"`
	By       string          `json:"by"`
	Via      string          `json:"via,omitempty"`
	Evidence json.RawMessage `json:"evidence"`
}

// Make checks one input (at index i of the request, for messages) and makes
// the claim by and via answer for, named by its content.
func Make(i int, in Input, by, via string) (Claim, error) {
	at := func(field string) string { return fmt.Sprintf("annotations/%d/%s", i, field) }
	if !ValidCAIP10(in.Subject) {
		return Claim{}, errs.Newf(errs.BadInput, "%s must be a CAIP-10 account id", at("subject")).
			WithHint("such as near:mainnet:alice.near, as a petal's id is")
	}
	if !verbPattern.MatchString(in.Verb) {
		return Claim{}, errs.Newf(errs.BadInput, "%s must be a lower-case word of 1 to 32 letters, digits or _", at("verb"))
	}
	if !oneOf(in.Kind, Kinds) {
		return Claim{}, errs.Newf(errs.BadInput, "%s must be one of %s", at("kind"), strings.Join(Kinds, ", "))
	}
	object, err := checkObject(at("object"), in.Verb, in.Object)
	if err != nil {
		return Claim{}, err
	}
	evidence, err := checkEvidence(at("evidence"), in.Evidence)
	if err != nil {
		return Claim{}, err
	}
	if by == "" || len(by) > MaxByChars || len(via) > MaxByChars {
		return Claim{}, errs.New(errs.Internal, "a claim needs who answers for it")
	}
	c := Claim{Schema: SchemaV2, Subject: in.Subject, Verb: in.Verb, Object: object, Kind: in.Kind, By: by, Via: via, Evidence: evidence}
	c.ID, err = c.name()
	return c, err
}

// name is the SHA-256 of the claim's canonical JSON without its id.
func (c Claim) name() (string, error) {
	c.ID = ""
	b, err := json.Marshal(struct {
		Claim
		ID string `json:"id,omitempty"`
	}{Claim: c})
	if err != nil {
		return "", errs.New(errs.Internal, "a claim could not be named").WithCause(err)
	}
	id, err := nameOf(b)
	if err != nil {
		return "", errs.New(errs.Internal, "a claim could not be named").WithCause(err)
	}
	return id, nil
}

// nameOf is the SHA-256 of a JSON text's canonical form (RFC 8785).
func nameOf(b []byte) (string, error) {
	canonical, err := canon.Transform(b)
	if err != nil {
		return "", err
	}
	return canon.Sum(canonical), nil
}

// Value is what a named or noted claim's object says ({ value }); "" for
// another verb's.
func (c Claim) Value() string {
	var v struct {
		Value string `json:"value"`
	}
	if json.Unmarshal(c.Object, &v) != nil {
		return ""
	}
	return v.Value
}

// checkObject bounds an object and gives it canonical form. named and noted
// take exactly { value: text }; other verbs any JSON object.
func checkObject(field, verb string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil, errs.Newf(errs.BadInput, "%s must be a JSON object", field)
	}
	if len(raw) > MaxObjectBytes {
		return nil, errs.Newf(errs.BadInput, "%s is %d bytes; at most %d", field, len(raw), MaxObjectBytes)
	}
	switch verb {
	case VerbNamed, VerbNoted:
		var v struct {
			Value string `json:"value"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&v); err != nil {
			return nil, errs.Newf(errs.BadInput, "%s of a %s claim must be { value: text } and nothing else", field, verb)
		}
		v.Value = strings.TrimSpace(v.Value)
		limit := MaxNameChars
		if verb == VerbNoted {
			limit = MaxNoteChars
		}
		if n := utf8.RuneCountInString(v.Value); n == 0 || n > limit {
			return nil, errs.Newf(errs.BadInput, "%s/value must be 1 to %d characters, not %d", field, limit, n)
		}
		return json.Marshal(v)
	}
	out, err := canon.Transform(raw)
	if err != nil {
		return nil, errs.Newf(errs.BadInput, "%s is not valid JSON: %v", field, err)
	}
	return out, nil
}

// checkEvidence bounds the evidence: a JSON array of at most MaxEvidence
// items and MaxEvidenceSize bytes; absent or null is [].
func checkEvidence(field string, raw json.RawMessage) (json.RawMessage, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return json.RawMessage(`[]`), nil
	}
	if raw[0] != '[' {
		return nil, errs.Newf(errs.BadInput, "%s must be a JSON array", field)
	}
	if len(raw) > MaxEvidenceSize {
		return nil, errs.Newf(errs.BadInput, "%s is %d bytes; at most %d", field, len(raw), MaxEvidenceSize)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(raw, &items); err != nil {
		return nil, errs.Newf(errs.BadInput, "%s must be a JSON array", field)
	}
	if len(items) > MaxEvidence {
		return nil, errs.Newf(errs.BadInput, "%s has %d items; at most %d", field, len(items), MaxEvidence)
	}
	out, err := canon.Transform(raw)
	if err != nil {
		return nil, errs.Newf(errs.BadInput, "%s is not valid JSON: %v", field, err)
	}
	return out, nil
}

func oneOf(s string, set []string) bool {
	for _, x := range set {
		if s == x {
			return true
		}
	}
	return false
}

// Names are the names a person gives petals: from their named claims, the
// newest for each subject (claims are given oldest first).
func Names(named []Claim) map[string]string {
	out := map[string]string{}
	for _, c := range named {
		if c.Verb != VerbNamed {
			continue
		}
		if v := c.Value(); v != "" {
			out[c.Subject] = v
		}
	}
	return out
}

// NamesHash names a set of named claims by their ids, in the order given:
// what a picture's address carries as &names=, so a cached picture is never
// another set's.
func NamesHash(ids []string) string {
	b, _ := json.Marshal(ids)
	return canon.Sum(b)
}

// ValidVerb reports whether s can be a claim's verb.
func ValidVerb(s string) bool { return verbPattern.MatchString(s) }
