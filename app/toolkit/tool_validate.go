package toolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/petal-near/petal/domain/errs"
)

// inputValidator checks a tool's input against its schema, compiled once
// when the tool is registered. github.com/santhosh-tekuri/jsonschema does the
// checking: a complete JSON Schema 2020-12 validator whose errors carry the
// instance's location and the failing keyword as data, so the answer names
// the JSON Pointer without parsing messages.
type InputValidator struct {
	schema *jsonschema.Schema
	// emptyOK: {} fits the schema, so an empty input (a GET with no query,
	// the commonest call) needs no decoding to be checked.
	emptyOK bool
}

func CompileInput(tool string, schema json.RawMessage) (*InputValidator, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("tool %s: its input schema is not JSON: %w", tool, err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	url := "petal:tool/" + tool + "/input"
	if err := c.AddResource(url, doc); err != nil {
		return nil, fmt.Errorf("tool %s: %w", tool, err)
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil, fmt.Errorf("tool %s: its input schema does not compile: %w", tool, err)
	}
	return &InputValidator{schema: s, emptyOK: s.Validate(map[string]any{}) == nil}, nil
}

// emptyInput is input that reads as {}: none, or an empty object.
func emptyInput(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || (len(t) == 2 && t[0] == '{' && t[1] == '}')
}

// check is bad_input naming the JSON Pointer of the first thing wrong (and
// how many more there are), or nil when raw fits the schema. Empty input reads as
// {}. The body's JSON rules (UTF-8, one value) are DecodeStrict's.
func (v *InputValidator) Check(raw json.RawMessage) error {
	if v.emptyOK && emptyInput(raw) {
		return nil
	}
	if len(bytes.TrimSpace(raw)) == 0 {
		raw = json.RawMessage(`{}`)
	}
	var inst any
	if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '{' && !deep(v.schema) {
		// An object, the usual input: one pass reads its members, and
		// what the schema does not look into is never decoded.
		var fields map[string]json.RawMessage
		if err := DecodeStrict(bytes.NewReader(raw), &fields); err != nil {
			return err
		}
		members, err := shallowMembers(fields, v.schema)
		if err != nil {
			return DecodeError(err)
		}
		inst = members
	} else {
		var whole json.RawMessage
		if err := DecodeStrict(bytes.NewReader(raw), &whole); err != nil {
			return err
		}
		var err error
		if inst, err = shallow(whole, v.schema); err != nil {
			return DecodeError(err)
		}
	}
	if members, ok := inst.(map[string]any); ok {
		absentIfNull(members, v.schema)
	}
	err := v.schema.Validate(inst)
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return err
	}
	problems := leafProblems(ve, nil)
	if len(problems) == 0 {
		problems = []errs.Problem{{Path: pointer(ve.InstanceLocation), Message: ve.ErrorKind.LocalizedString(english)}}
	}
	first := problems[0]
	e := errs.New(errs.BadInput, first.Message, "see the tool's input schema")
	if strings.HasPrefix(first.Message, "unknown field") {
		e = e.WithHint("remove the field; see the tool's input schema")
	}
	if len(problems) > 1 {
		e.Message += fmt.Sprintf(" (and %d more problems)", len(problems)-1)
	}
	return e // problems stay out of the body: bad_input's shape is {code, message, hint}
}

// absentIfNull drops the optional members given as null (an unknown one
// stays, to be refused): null for an optional field reads as leaving it out (models often send one), while the
// published schema types the field by the one type it has when present, for
// the clients that read a single type word (OptionalNotNull).
func absentIfNull(members map[string]any, s *jsonschema.Schema) {
	for name, v := range members {
		if _, declared := s.Properties[name]; v == nil && declared && !slices.Contains(s.Required, name) {
			delete(members, name)
		}
	}
}

var english = message.NewPrinter(language.English)

// leafProblems flattens a validation error to its causes, each in words
// naming its JSON Pointer, in the order of their locations.
func leafProblems(ve *jsonschema.ValidationError, out []errs.Problem) []errs.Problem {
	if len(ve.Causes) > 0 {
		for _, c := range ve.Causes {
			out = leafProblems(c, out)
		}
		slices.SortStableFunc(out, func(a, b errs.Problem) int { return strings.Compare(a.Path, b.Path) })
		return out
	}
	at := pointer(ve.InstanceLocation)
	switch k := ve.ErrorKind.(type) {
	case *kind.AdditionalProperties:
		for _, p := range k.Properties {
			field := at + "/" + escapePointer(p)
			out = append(out, errs.Problem{Path: field, Message: "unknown field " + field})
		}
		return out
	case *kind.Required:
		for _, p := range k.Missing {
			field := at + "/" + escapePointer(p)
			out = append(out, errs.Problem{Path: field, Message: "field " + field + " is required"})
		}
		return out
	case *kind.Type:
		want := make([]string, 0, len(k.Want))
		for _, w := range k.Want {
			if w != "null" {
				want = append(want, jsonTypeWords(w))
			}
		}
		return append(out, errs.Problem{Path: at, Message: fmt.Sprintf("field %s: expected %s, got %s", orRoot(at), strings.Join(want, " or "), k.Got)})
	case *kind.Pattern:
		if words, ok := patternWords[k.Want]; ok {
			return append(out, errs.Problem{Path: at, Message: fmt.Sprintf("field %s must be %s, not %q", orRoot(at), words, CutForMessage(k.Got))})
		}
		return append(out, errs.Problem{Path: at, Message: fmt.Sprintf("field %s: %q does not match %s", orRoot(at), CutForMessage(k.Got), k.Want)})
	case *kind.MinLength:
		return append(out, errs.Problem{Path: at, Message: fmt.Sprintf("field %s: at least %d characters, not %d", orRoot(at), k.Want, k.Got)})
	case *kind.MaxLength:
		return append(out, errs.Problem{Path: at, Message: fmt.Sprintf("field %s: at most %d characters, not %d", orRoot(at), k.Want, k.Got)})
	case *kind.Minimum:
		return append(out, errs.Problem{Path: at, Message: fmt.Sprintf("field %s: at least %s, not %s", orRoot(at), k.Want.RatString(), k.Got.RatString())})
	case *kind.Maximum:
		return append(out, errs.Problem{Path: at, Message: fmt.Sprintf("field %s: at most %s, not %s", orRoot(at), k.Want.RatString(), k.Got.RatString())})
	case *kind.Enum:
		want := make([]string, len(k.Want))
		for i, w := range k.Want {
			b, _ := json.Marshal(w)
			want[i] = string(b)
		}
		got, _ := json.Marshal(k.Got)
		return append(out, errs.Problem{Path: at, Message: fmt.Sprintf("field %s must be one of %s, not %s", orRoot(at), strings.Join(want, ", "), CutForMessage(string(got)))})
	}
	return append(out, errs.Problem{Path: at, Message: "field " + orRoot(at) + ": " + ve.ErrorKind.LocalizedString(english)})
}

// patternWords says in words what the patterns tools use mean.
var patternWords = map[string]string{
	Sha256Pattern: "64 lower-case hex digits (a SHA-256)",
	ChainPattern:  `"near:mainnet", "near:testnet" or an EVM chain as "eip155:<chain id>"`,
}

func jsonTypeWords(t string) string {
	switch t {
	case "integer":
		return "a whole number"
	case "boolean":
		return "true or false"
	case "array", "object":
		return "an " + t
	}
	return "a " + t
}

func pointer(loc []string) string {
	var b strings.Builder
	for _, p := range loc {
		b.WriteString("/" + escapePointer(p))
	}
	return b.String()
}

func escapePointer(s string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(s)
}

func orRoot(p string) string {
	if p == "" {
		return "/"
	}
	return p
}

// shallow decodes raw for validation only as deep as s looks: a value whose
// schema says nothing of what is inside it (a spec, an inline snapshot, a
// reader's params) stands in as an empty value of its JSON type, so checking
// costs the schema's depth, not the size of what the tool decodes itself.
func shallow(raw json.RawMessage, s *jsonschema.Schema) (any, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return nil, io.ErrUnexpectedEOF
	}
	whole := deep(s)
	switch raw[0] {
	case '{':
		if !whole && !looksInsideObject(s) {
			return map[string]any{}, nil
		}
		if whole {
			return decodeAny(raw)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, err
		}
		return shallowMembers(fields, s)
	case '[':
		if !whole && !looksInsideArray(s) {
			return []any{}, nil
		}
		if whole || s.Items2020 == nil {
			return decodeAny(raw)
		}
		var items []json.RawMessage
		if err := json.Unmarshal(raw, &items); err != nil {
			return nil, err
		}
		out := make([]any, len(items))
		for i, v := range items {
			val, err := shallow(v, s.Items2020)
			if err != nil {
				return nil, err
			}
			out[i] = val
		}
		return out, nil
	}
	return decodeAny(raw)
}

// shallowMembers is an object's members, each as deep as s looks.
func shallowMembers(fields map[string]json.RawMessage, s *jsonschema.Schema) (map[string]any, error) {
	out := make(map[string]any, len(fields))
	for name, v := range fields {
		child := s.Properties[name]
		if ap, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && child == nil {
			child = ap
		}
		if child == nil && s.PatternProperties == nil {
			// Refused, or allowed as anything: what is inside does not matter.
			val, err := placeholder(v)
			if err != nil {
				return nil, err
			}
			out[name] = val
			continue
		}
		val, err := shallow(v, child)
		if err != nil {
			return nil, err
		}
		out[name] = val
	}
	return out, nil
}

// deep is a schema whose keywords may look at a whole value (references,
// combinations, enum, const): its value is decoded whole.
func deep(s *jsonschema.Schema) bool {
	return s == nil || s.Ref != nil || s.DynamicRef != nil || s.RecursiveRef != nil || s.AllOf != nil || s.AnyOf != nil ||
		s.OneOf != nil || s.Not != nil || s.If != nil || s.Enum != nil || s.Const != nil
}

func looksInsideObject(s *jsonschema.Schema) bool {
	return s.Properties != nil || s.PatternProperties != nil || s.AdditionalProperties != nil || s.Required != nil ||
		s.PropertyNames != nil || s.MinProperties != nil || s.MaxProperties != nil || s.Dependencies != nil ||
		s.DependentRequired != nil || s.DependentSchemas != nil || s.UnevaluatedProperties != nil
}

func looksInsideArray(s *jsonschema.Schema) bool {
	return s.Items != nil || s.Items2020 != nil || s.PrefixItems != nil || s.AdditionalItems != nil || s.Contains != nil ||
		s.MinItems != nil || s.MaxItems != nil || s.UniqueItems || s.UnevaluatedItems != nil
}

// placeholder is an empty value of raw's JSON type, or raw itself when it
// is a scalar.
func placeholder(raw json.RawMessage) (any, error) {
	switch t := bytes.TrimSpace(raw); {
	case len(t) > 0 && t[0] == '{':
		return map[string]any{}, nil
	case len(t) > 0 && t[0] == '[':
		return []any{}, nil
	}
	return decodeAny(raw)
}

func decodeAny(raw json.RawMessage) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	err := dec.Decode(&v)
	return v, err
}

func CutForMessage(s string) string {
	if utf8.RuneCountInString(s) > 80 {
		return string([]rune(s)[:80]) + "…"
	}
	return strings.ToValidUTF8(s, "\uFFFD")
}
