package snapshots

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/errs"
)

// Name is a snapshot's name, the lower-case hex SHA-256 of its canonical JSON
// (RFC 8785), with those canonical bytes. The same reading always gets the
// same name, whoever made it.
func Name(s Snapshot) (sha256 string, canonical []byte, err error) {
	if out, ok := appendCanonical(make([]byte, 0, 256+len(s.Accounts)*200), s); ok {
		return canon.Sum(out), out, nil
	}
	return canon.SHA256Hex(s)
}

// Parse reads a snapshot posted as JSON: held to PostedLimits, then read
// strictly (an unknown field is an error, since it would be dropped and
// change the name), validated, and named by the canonical form of the bytes
// as sent. Every error is bad_input.
func Parse(raw []byte) (s Snapshot, sha256 string, canonical []byte, err error) {
	if err := CheckShape(raw, PostedLimits); err != nil {
		return s, "", nil, err
	}
	return ParseShaped(raw)
}

// ParseShaped is Parse for bytes already held to PostedLimits (streamed
// through a ShapeChecker as they arrived). When raw is already canonical, as
// a reading named by its SHA-256 usually is, the canonical bytes returned are
// raw itself.
func ParseShaped(raw []byte) (s Snapshot, sha256 string, canonical []byte, err error) {
	return parseShaped(raw, 0)
}

// ParseShapedCounted is ParseShaped told how many accounts the shape checker
// counted, so the accounts are decoded into one array of the right size
// rather than one grown by doubling.
func ParseShapedCounted(raw []byte, accounts int) (s Snapshot, sha256 string, canonical []byte, err error) {
	return parseShaped(raw, accounts)
}

func parseShaped(raw []byte, accounts int) (s Snapshot, sha256 string, canonical []byte, err error) {
	if accounts > 0 {
		s.Accounts = make([]Account, 0, min(accounts, MaxAccounts))
	}
	// json.Unmarshal decodes raw where it lies; a json.Decoder would first
	// copy it whole into a buffer of its own, growing by doubling.
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, "", nil, errs.Newf(errs.BadInput, "the snapshot could not be read: %s", plainJSONError(err)).
			WithHint("send one snapshot/v1 object; see /docs/schemas/snapshot-v1.schema.json")
	}
	// The name must be the one petal would give the decoded snapshot, or a
	// stored reading would name itself two ways. When raw is the decoded
	// snapshot's own canonical form, as a reading named by its SHA-256
	// usually is, that holds and nothing was dropped: every key raw has,
	// the snapshot has.
	if canonicalEqual(s, raw) {
		if problems := Validate(s); len(problems) > 0 {
			return s, "", nil, Invalid(problems)
		}
		return s, canon.Sum(raw), raw, nil
	}
	return parseSlowly(raw)
}

// parseSlowly is ParseShaped for bytes that are not their own canonical form:
// read strictly (an unknown field would be dropped and change the name),
// then compared with their canonical form, which encoding/json forgives
// breaking (keys in another case, missing keys read as zero, a null cut).
func parseSlowly(raw []byte) (s Snapshot, sha256 string, canonical []byte, err error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		return s, "", nil, errs.Newf(errs.BadInput, "the snapshot could not be read: %s", plainJSONError(err)).
			WithHint("send one snapshot/v1 object; see /docs/schemas/snapshot-v1.schema.json")
	}
	if dec.More() {
		return s, "", nil, errs.New(errs.BadInput, "the snapshot has data after its JSON object")
	}
	if problems := Validate(s); len(problems) > 0 {
		return s, "", nil, Invalid(problems)
	}
	canonical, err = canon.Transform(raw)
	if err != nil {
		return s, "", nil, errs.Newf(errs.BadInput, "the snapshot is not canonicalisable JSON: %s", err.Error())
	}
	var top map[string]json.RawMessage
	_ = json.Unmarshal(raw, &top)
	for _, key := range []string{"schema", "network", "params", "chain", "block", "title", "about", "groups", "accounts", "source"} {
		if _, ok := top[key]; !ok {
			return s, "", nil, errs.Newf(errs.BadInput, "the snapshot has no %s (keys are lower case)", key).
				WithHint("see /docs/schemas/snapshot-v1.schema.json")
		}
	}
	_, own, err := Name(s)
	if err != nil || !bytes.Equal(own, canonical) {
		return s, "", nil, errs.New(errs.BadInput,
			"the snapshot holds something snapshot/v1 writes otherwise: a key in another case or missing, an empty attrs or detail, or a null where a value belongs",
			"write it as the schema says; its name is the SHA-256 of that form")
	}
	return s, canon.Sum(canonical), canonical, nil
}

// Invalid is the bad_input error carrying a snapshot's problems.
func Invalid(problems []Problem) *errs.Error {
	msg := fmt.Sprintf("the snapshot is not valid snapshot/v1: %s: %s", problems[0].Path, problems[0].Message)
	if len(problems) > 1 {
		msg += fmt.Sprintf(" (and %d more problems)", len(problems)-1)
	}
	e := errs.New(errs.BadInput, msg, "see /docs/schemas/snapshot-v1.schema.json")
	e.Problems = problems
	return e
}

func plainJSONError(err error) string {
	var typ *json.UnmarshalTypeError
	var syn *json.SyntaxError
	switch {
	case asErr(err, &typ):
		if typ.Field != "" {
			return fmt.Sprintf("field %s has the wrong type (%s)", typ.Field, typ.Value)
		}
		return fmt.Sprintf("expected an object, got %s", typ.Value)
	case asErr(err, &syn):
		return fmt.Sprintf("invalid JSON at byte %d", syn.Offset)
	}
	return err.Error()
}

// TargetKey names what a reading reads, so the newest stored reading of a
// target can be found: the network, plus its params in canonical form when
// it has any (near-dao-members{"chain":"near:mainnet","dao":"x.sputnik-dao.near"}).
func TargetKey(network string, params json.RawMessage) (string, error) {
	p := bytes.TrimSpace(params)
	if len(p) == 0 || string(p) == "null" {
		return network, nil
	}
	c, err := canon.Transform(p)
	if err != nil {
		return "", errs.New(errs.BadInput, "params are not valid JSON").WithCause(err)
	}
	if string(c) == "{}" {
		return network, nil
	}
	return network + string(c), nil
}
