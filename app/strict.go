package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/petal-near/petal/domain/errs"
)

// DecodeStrict decodes exactly one JSON value from r into `into`, refusing
// unknown fields, wrong types, trailing data and a second value with a
// bad_input error that names the field.
func DecodeStrict(r io.Reader, into any) error {
	dec := json.NewDecoder(r)
	dec.DisallowUnknownFields()
	dec.UseNumber()
	if err := dec.Decode(into); err != nil {
		return decodeError(err)
	}
	var extra json.RawMessage
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
		return nil
	case err == nil:
		return errs.New(errs.BadInput, "the body holds more than one JSON value", "send exactly one JSON object")
	default:
		return errs.New(errs.BadInput, "the body has data after its JSON value", "send exactly one JSON object")
	}
}

func decodeError(err error) error {
	if e, ok := errs.As(err); ok {
		return e
	}
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var tooBig *BodyTooLargeError
	switch {
	case errors.As(err, &tooBig):
		return errs.Newf(errs.BadInput, "the body is larger than %s", tooBig.Limit).WithHint("send a smaller body")
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

// BodyTooLargeError is what a size-capped body reader returns past its cap.
type BodyTooLargeError struct{ Limit string }

func (e *BodyTooLargeError) Error() string { return fmt.Sprintf("body larger than %s", e.Limit) }
