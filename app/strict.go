package app

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
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

// CheckJSONText walks the first JSON value of raw and refuses, as bad_input
// naming the place, a member name given twice in one object and a string (a
// name or a value) holding a C0 control character other than tab, line feed
// and carriage return. Syntax errors are left to the decoder that follows,
// which names them better. It reads the bytes once, without decoding them:
// names are compared as sent (decoded only when they hold an escape), and a
// place is spelled out only for the message.
func CheckJSONText(raw []byte) error {
	c := textChecker{b: raw}
	c.space()
	err := c.value(0)
	if err == errNotJSON {
		return nil
	}
	return err
}

// errNotJSON stops the walk at bytes that are not JSON: the decoder after
// it says what is wrong.
var errNotJSON = errors.New("not JSON")

// maxCheckDepth is deeper than encoding/json goes (10,000), so the decoder,
// not this walk, refuses what is too deep.
const maxCheckDepth = 10_001

type textChecker struct {
	b    []byte
	i    int
	path []pathStep // where the walk is, for messages
	keys [][][]byte // each open object's names so far (raw), reused by depth
}

type pathStep struct {
	name  []byte // a member's raw name, or nil for an element
	index int
}

func (c *textChecker) space() {
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ' ', '\t', '\n', '\r':
			c.i++
		default:
			return
		}
	}
}

func (c *textChecker) value(depth int) error {
	if c.i >= len(c.b) || depth > maxCheckDepth {
		return errNotJSON
	}
	switch c.b[c.i] {
	case '{':
		return c.object(depth)
	case '[':
		return c.array(depth)
	case '"':
		_, at, err := c.str()
		if err != nil {
			return err
		}
		if at >= 0 {
			return errs.Newf(errs.BadInput, "%s holds a control character (U+%04X)", c.where(), at).
				WithHint("remove control characters; tab and line breaks are fine")
		}
		return nil
	}
	// A number or a literal: the decoder checks them.
	for c.i < len(c.b) {
		switch c.b[c.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return nil
		}
		c.i++
	}
	return nil
}

func (c *textChecker) object(depth int) error {
	c.i++ // {
	for len(c.keys) <= depth {
		c.keys = append(c.keys, nil)
	}
	c.keys[depth] = c.keys[depth][:0]
	var seen map[string]struct{} // past a few names, a set
	c.space()
	if c.i < len(c.b) && c.b[c.i] == '}' {
		c.i++
		return nil
	}
	for {
		c.space()
		if c.i >= len(c.b) || c.b[c.i] != '"' {
			return errNotJSON
		}
		name, at, err := c.str()
		if err != nil {
			return err
		}
		if at >= 0 {
			return errs.Newf(errs.BadInput, "a name in %s holds a control character (U+%04X)", c.where(), at).
				WithHint("remove control characters; tab and line breaks are fine")
		}
		c.path = append(c.path, pathStep{name: name})
		dup := false
		if seen != nil {
			key := unescapedName(name)
			_, dup = seen[key]
			seen[key] = struct{}{}
		} else {
			for _, k := range c.keys[depth] {
				if sameName(k, name) {
					dup = true
					break
				}
			}
			c.keys[depth] = append(c.keys[depth], name)
			if len(c.keys[depth]) > 16 {
				seen = make(map[string]struct{}, 64)
				for _, k := range c.keys[depth] {
					seen[unescapedName(k)] = struct{}{}
				}
			}
		}
		if dup {
			return errs.Newf(errs.BadInput, "%s is given twice", c.where()).WithHint("send each name once in an object")
		}
		c.space()
		if c.i >= len(c.b) || c.b[c.i] != ':' {
			return errNotJSON
		}
		c.i++
		c.space()
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
		c.space()
		if c.i >= len(c.b) {
			return errNotJSON
		}
		switch c.b[c.i] {
		case ',':
			c.i++
		case '}':
			c.i++
			return nil
		default:
			return errNotJSON
		}
	}
}

func (c *textChecker) array(depth int) error {
	c.i++ // [
	c.space()
	if c.i < len(c.b) && c.b[c.i] == ']' {
		c.i++
		return nil
	}
	for n := 0; ; n++ {
		c.space()
		c.path = append(c.path, pathStep{index: n})
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
		c.space()
		if c.i >= len(c.b) {
			return errNotJSON
		}
		switch c.b[c.i] {
		case ',':
			c.i++
		case ']':
			c.i++
			return nil
		default:
			return errNotJSON
		}
	}
}

// str reads a string at c.i and returns its raw contents (between the
// quotes) and the first C0 control character it stands for (-1: none).
func (c *textChecker) str() ([]byte, int, error) {
	c.i++ // "
	start, control := c.i, -1
	for c.i < len(c.b) {
		ch := c.b[c.i]
		switch {
		case ch == '"':
			raw := c.b[start:c.i]
			c.i++
			return raw, control, nil
		case ch < 0x20:
			return nil, -1, errNotJSON // raw controls are a syntax error
		case ch == '\\':
			if c.i+1 >= len(c.b) {
				return nil, -1, errNotJSON
			}
			switch c.b[c.i+1] {
			case 'b': // backspace, U+0008
				if control < 0 {
					control = 0x08
				}
				c.i += 2
			case 'f': // form feed, U+000C
				if control < 0 {
					control = 0x0c
				}
				c.i += 2
			case 'u':
				if c.i+6 > len(c.b) {
					return nil, -1, errNotJSON
				}
				v, err := strconv.ParseUint(string(c.b[c.i+2:c.i+6]), 16, 16)
				if err != nil {
					return nil, -1, errNotJSON
				}
				if v < 0x20 && v != '\t' && v != '\n' && v != '\r' && control < 0 {
					control = int(v)
				}
				c.i += 6
			default:
				c.i += 2
			}
		default:
			c.i++
		}
	}
	return nil, -1, errNotJSON
}

// where names the place being read, as the messages say it.
func (c *textChecker) where() string {
	if len(c.path) == 0 {
		return "the body"
	}
	var b strings.Builder
	b.WriteString("field ")
	for i, p := range c.path {
		if p.name == nil {
			fmt.Fprintf(&b, "[%d]", p.index)
			continue
		}
		if i > 0 {
			b.WriteByte('.')
		}
		b.WriteString(unescapedName(p.name))
	}
	return b.String()
}

// sameName compares two raw names as JSON reads them.
func sameName(a, b []byte) bool {
	if bytes.IndexByte(a, '\\') < 0 && bytes.IndexByte(b, '\\') < 0 {
		return bytes.Equal(a, b)
	}
	return unescapedName(a) == unescapedName(b)
}

// unescapedName is a raw name as JSON reads it.
func unescapedName(raw []byte) string {
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw)
	}
	var s string
	if err := json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s); err != nil {
		return string(raw)
	}
	return s
}
