package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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
// Callers bound the body (the door's body limit), so it is read whole first.
func DecodeStrict(r io.Reader, into any) error {
	raw, err := io.ReadAll(&utf8Reader{r: r})
	if err != nil {
		return decodeError(err)
	}
	if err := CheckJSONText(raw); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
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
	case errs.Is(err, errs.BadInput):
		return err // not UTF-8, or too large, after the value
	default:
		return errs.New(errs.BadInput, "the body has data after its JSON value", "send exactly one JSON object")
	}
}

// utf8Reader passes bytes through, failing with bad_input at the first byte
// that is not UTF-8. A rune split across two reads is held back until it is
// whole, so chunk boundaries never matter.
type utf8Reader struct {
	r     io.Reader
	carry []byte // the start of a rune whose end has not been read yet
	at    int64  // bytes checked so far, for the message
	err   error  // once the body is found not UTF-8, every read says so
}

// Read passes on only the bytes before an invalid one, and the error stays,
// so a decoder that has read a whole value meanwhile still sees it.
func (u *utf8Reader) Read(p []byte) (int, error) {
	if u.err != nil {
		return 0, u.err
	}
	n, err := u.r.Read(p)
	b := p[:n]
	if len(u.carry) > 0 && len(b) > 0 {
		var joined [2 * utf8.UTFMax]byte
		k := copy(joined[:], u.carry)
		k += copy(joined[k:], b[:min(len(b), utf8.UTFMax)])
		if !utf8.FullRune(joined[:k]) {
			u.carry = append(u.carry, b...)
			b = nil
		} else {
			r, size := utf8.DecodeRune(joined[:k])
			if r == utf8.RuneError && size <= 1 {
				return 0, u.notUTF8(0)
			}
			b = b[size-len(u.carry):]
			u.at += int64(size)
			u.carry = u.carry[:0]
		}
	}
	keep := 0
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				keep = len(b) - i
			}
			break
		}
	}
	whole := b[:len(b)-keep]
	if !utf8.Valid(whole) {
		i := 0
		for i < len(whole) {
			r, size := utf8.DecodeRune(whole[i:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			i += size
		}
		return n - len(b) + i, u.notUTF8(int64(i))
	}
	u.at += int64(len(whole))
	u.carry = append(u.carry, b[len(b)-keep:]...)
	if errors.Is(err, io.EOF) && len(u.carry) > 0 {
		return n, u.notUTF8(0)
	}
	return n, err
}

func (u *utf8Reader) notUTF8(offset int64) error {
	u.err = errs.Newf(errs.BadInput, "the body is not valid UTF-8 (at byte %d)", u.at+offset).WithHint("send JSON encoded as UTF-8")
	return u.err
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
