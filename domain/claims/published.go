package claims

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"sort"
	"strings"
	"time"
)

// Published is one claim the site publishes about the map's accounts
// (claim/v3, the open claim format): checked, shipped in the repo, the same
// for every viewer. It relates accounts to accounts, or says what kind of
// account one is; it never names a person.
type Published struct {
	Schema     string          `json:"schema"`
	ID         string          `json:"id"`
	Subject    string          `json:"subject"`
	Verb       string          `json:"verb"`
	Object     json.RawMessage `json:"object"`
	Kind       string          `json:"kind"`
	By         string          `json:"by"`
	IssuedAt   string          `json:"issued_at"`
	Evidence   []Evidence      `json:"evidence"`
	Method     string          `json:"method,omitempty"`
	Qualifiers *Qualifiers     `json:"qualifiers,omitempty"`
}

// Evidence is one thing a published claim rests on: a transaction, a
// contract call, a block or a public page, by reference.
type Evidence struct {
	Type string `json:"type"`
	Ref  string `json:"ref"`
}

// Qualifiers say how sure an inferred claim is.
type Qualifiers struct {
	Confidence string `json:"confidence"`
}

// The published verbs and what each object holds. Each object is decoded
// strictly into its shape, so no published claim can carry free text: a name
// given to an account, or anything else that could say who a person is, has
// nowhere to go.
const (
	VerbSameOwner = "same_owner" // { account }: both are controlled by one owner (what power_path walks)
	VerbFundedBy  = "funded_by"  // { account }: its first funds came from account
	VerbCreatedBy = "created_by" // { account }: account created it (a factory, a parent account)
	VerbControls  = "controls"   // { account }: it can act for account (a multisig's member, a DAO's proposal)
	VerbIs        = "is"         // { value }: what kind of account it is, one of AccountKinds
)

// AccountKinds are what an account can be said to be: kinds of contract and
// service, never of person.
var AccountKinds = []string{"dao", "token", "staking_pool", "validator", "exchange", "bridge", "multisig", "factory", "contract"}

var (
	publishedVerbs = []string{VerbSameOwner, VerbFundedBy, VerbCreatedBy, VerbControls, VerbIs}
	evidenceTypes  = []string{"tx", "call", "block", "url"}
	confidences    = []string{"low", "medium", "high"}
	publisherBy    = regexp.MustCompile(`^(petals|tool:[a-z0-9][-a-z0-9_]{0,31}@[0-9]{1,4})$`)
	methodPattern  = regexp.MustCompile(`^[a-z0-9][-a-z0-9_]{0,63}@[0-9]{1,4}$`)
	personID       = regexp.MustCompile(`(?i)\bprs_[0-9a-f]`)
)

// Limits of the published claims' file.
const (
	MaxPublished       = 10_000
	MaxEvidenceRefChar = 512
)

// ParsePublished reads the site's claims file (a JSON array of claim/v3) and
// checks every claim as a published claim: its id is its content's name, its
// subject an account, its verb one of the published verbs with its object
// in that verb's shape, an inferred claim says its method and confidence, and
// none names a person. Anything else is an error naming the claim, so a bad
// file stops petal at start rather than publishing it. The claims come back
// oldest first (issued_at, then id).
func ParsePublished(raw []byte) ([]Published, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var out []Published
	if err := dec.Decode(&out); err != nil {
		return nil, fmt.Errorf("site claims: not an array of claim/v3: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("site claims: data after the array")
	}
	if len(out) > MaxPublished {
		return nil, fmt.Errorf("site claims: %d claims; at most %d", len(out), MaxPublished)
	}
	seen := map[string]bool{}
	for i := range out {
		if err := out[i].check(); err != nil {
			return nil, fmt.Errorf("site claims: claim %d (%s): %w", i, out[i].ID, err)
		}
		if seen[out[i].ID] {
			return nil, fmt.Errorf("site claims: claim %d (%s) is listed twice", i, out[i].ID)
		}
		seen[out[i].ID] = true
	}
	sort.SliceStable(out, func(a, b int) bool {
		if out[a].IssuedAt != out[b].IssuedAt {
			return out[a].issued().Before(out[b].issued())
		}
		return out[a].ID < out[b].ID
	})
	return out, nil
}

func (p Published) issued() time.Time {
	t, _ := time.Parse(time.RFC3339, p.IssuedAt)
	return t
}

// NamePublished is a published claim's id: the SHA-256 of its canonical JSON
// without id.
func NamePublished(p Published) (string, error) {
	p.ID = ""
	b, err := json.Marshal(struct {
		Published
		ID string `json:"id,omitempty"`
	}{Published: p})
	if err != nil {
		return "", err
	}
	return nameOf(b)
}

func (p Published) check() error {
	if p.Schema != SchemaV3 {
		return fmt.Errorf("schema must be %s", SchemaV3)
	}
	if p.Verb == VerbNamed || p.Verb == VerbNoted {
		return fmt.Errorf("verb %s names a person or carries free text: a published claim never does", p.Verb)
	}
	if !ValidCAIP10(p.Subject) || personID.MatchString(p.Subject) {
		return fmt.Errorf("subject must be an account (CAIP-10)")
	}
	if !oneOf(p.Verb, publishedVerbs) {
		return fmt.Errorf("verb %q is not one a published claim may use (%s)", p.Verb, strings.Join(publishedVerbs, ", "))
	}
	if err := checkPublishedObject(p.Verb, p.Object); err != nil {
		return err
	}
	if !publisherBy.MatchString(p.By) {
		return fmt.Errorf("by must be petals or tool:<name>@<version>, never a person")
	}
	if t, err := time.Parse(time.RFC3339, p.IssuedAt); err != nil || t.IsZero() {
		return fmt.Errorf("issued_at must be an RFC 3339 time")
	}
	if len(p.Evidence) == 0 || len(p.Evidence) > MaxEvidence {
		return fmt.Errorf("evidence must hold 1 to %d items: a published claim is checked", MaxEvidence)
	}
	for j, e := range p.Evidence {
		if !oneOf(e.Type, evidenceTypes) {
			return fmt.Errorf("evidence %d: type must be one of %s", j, strings.Join(evidenceTypes, ", "))
		}
		if e.Ref == "" || len(e.Ref) > MaxEvidenceRefChar || personID.MatchString(e.Ref) {
			return fmt.Errorf("evidence %d: ref must be 1 to %d characters naming no person", j, MaxEvidenceRefChar)
		}
	}
	switch p.Kind {
	case Observed:
		if p.Method != "" || p.Qualifiers != nil {
			return fmt.Errorf("an observed claim has no method or qualifiers")
		}
	case Inferred:
		if !methodPattern.MatchString(p.Method) {
			return fmt.Errorf("an inferred claim names its method, <name>@<version>")
		}
		if p.Qualifiers == nil || !oneOf(p.Qualifiers.Confidence, confidences) {
			return fmt.Errorf("an inferred claim says its confidence: qualifiers { confidence: low | medium | high }")
		}
	default:
		return fmt.Errorf("kind must be observed or inferred: the site states nothing on anyone's word")
	}
	id, err := NamePublished(p)
	if err != nil {
		return err
	}
	if p.ID != id {
		return fmt.Errorf("id must be the SHA-256 of the claim's canonical JSON without id (%s)", id)
	}
	return nil
}

// checkPublishedObject decodes an object strictly into its verb's shape.
func checkPublishedObject(verb string, raw json.RawMessage) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if verb == VerbIs {
		var o struct {
			Value string `json:"value"`
		}
		if err := dec.Decode(&o); err != nil || !oneOf(o.Value, AccountKinds) {
			return fmt.Errorf("object of is must be { value } with value one of %s", strings.Join(AccountKinds, ", "))
		}
		return nil
	}
	var o struct {
		Account string `json:"account"`
	}
	if err := dec.Decode(&o); err != nil || !ValidCAIP10(o.Account) {
		return fmt.Errorf("object of %s must be { account } with account a CAIP-10 account id", verb)
	}
	return nil
}
