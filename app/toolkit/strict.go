package toolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/errs"
)

// DecodeStrict decodes exactly one JSON value from r into `into`, refusing
// unknown fields, wrong types, trailing data and a second value with a
// bad_input error that names the field.
//
// The body must be UTF-8, as the contract's rules say: encoding/json would
// otherwise turn invalid bytes into U+FFFD silently.
//
// Two things encoding/json lets through are refused too, naming where they
// are: a name given twice in one object (encoding/json keeps the last, so two
// readers of one body could disagree on what it says), and a C0 control
// character other than tab, line feed and carriage return in any string
// (PostgreSQL can't store NUL in text, and the others only hide text).
// Callers bound the body (the door's body limit), so it is read whole first;
// a door that streams a body may refuse it sooner (the HTTP door checks
// UTF-8 as it reads, and caps the size).
func DecodeStrict(r io.Reader, into any) error {
	raw, err := io.ReadAll(r)
	if err != nil {
		return DecodeError(err)
	}
	if !utf8.Valid(raw) {
		return notUTF8(raw)
	}
	if err := CheckJSONText(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return DecodeError(err)
	}
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		return errs.New(errs.BadInput, "the body holds more than one JSON value", "send exactly one JSON object")
	case errs.Is(err, errs.BadInput):
		return err // not UTF-8, or too large, after the value
	default:
		return errs.New(errs.BadInput, "the body has data after its JSON value", "send exactly one JSON object")
	}
}

// notUTF8 is the refusal of a body that isn't UTF-8, naming the first
// byte that isn't.
func notUTF8(raw []byte) error {
	i := 0
	for i < len(raw) {
		r, size := utf8.DecodeRune(raw[i:])
		if r == utf8.RuneError && size <= 1 {
			break
		}
		i += size
	}
	return errs.Newf(errs.BadInput, "the body is not valid UTF-8 (at byte %d)", i).WithHint("send JSON encoded as UTF-8")
}

func DecodeError(err error) error {
	if e, ok := errs.As(err); ok {
		return e
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF):
		return errs.New(errs.BadInput, "the body is empty", "send a JSON object")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.New(errs.BadInput, "the body's JSON ends too soon", "send complete JSON")
	case errors.As(err, &syntax):
		return errs.Newf(errs.BadInput, "the body is not valid JSON (at byte %d)", syntax.Offset).WithHint("send a JSON object")
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			return errs.Newf(errs.BadInput, "expected a JSON %s, got %s", jsonKind(typ.Type.Kind().String()), typ.Value).WithHint("send a JSON object")
		}
		return errs.Newf(errs.BadInput, "field %s: expected %s, got %s", field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		field := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return errs.Newf(errs.BadInput, "unknown field %s", field).WithHint("remove the field; see the tool's input schema")
	}
	return errs.Newf(errs.BadInput, "the body could not be read: %s", strings.TrimPrefix(err.Error(), "json: "))
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "bool":
		return "true or false"
	case "slice", "array":
		return "an array"
	case "map", "struct":
		return "an object"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float32", "float64":
		return "a number"
	}
	return "another type"
}
