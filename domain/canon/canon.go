// Package canon writes RFC 8785 canonical JSON (the JSON Canonicalization
// Scheme, JCS): object members sorted by their names' UTF-16 code units, no
// whitespace, numbers as ECMAScript prints them, strings with the fewest
// escapes. Petal names content (snapshots, specs) by the SHA-256 of these
// bytes, so two writers anywhere agree on a name without talking.
package canon

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// Marshal is the canonical JSON of a Go value: encoding/json's bytes,
// canonicalised.
func Marshal(v any) ([]byte, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("canon: %w", err)
	}
	return Transform(raw)
}

// SHA256Hex is the lower-case hex SHA-256 of v's canonical JSON, with the
// canonical bytes themselves.
func SHA256Hex(v any) (string, []byte, error) {
	b, err := Marshal(v)
	if err != nil {
		return "", nil, err
	}
	return Sum(b), b, nil
}

// Sum is the lower-case hex SHA-256 of bytes already canonical.
func Sum(canonical []byte) string {
	h := sha256.Sum256(canonical)
	return hex.EncodeToString(h[:])
}

// Transform canonicalises one JSON text. It refuses what RFC 8785 (through
// I-JSON) refuses: invalid UTF-8, lone surrogates, duplicate member names,
// numbers outside float64's range, and anything after the value.
func Transform(in []byte) ([]byte, error) {
	return AppendTransform(make([]byte, 0, len(in)), in)
}

// AppendTransform is Transform writing onto dst, so a caller canonicalising
// many small texts into one buffer (a snapshot's accounts' attrs) allocates
// nothing per text. On an error dst's contents past its old length are
// undefined.
func AppendTransform(dst, in []byte) ([]byte, error) {
	c := canonicaliser{in: in, out: dst}
	c.space()
	if err := c.value(0); err != nil {
		return nil, err
	}
	c.space()
	if c.pos != len(c.in) {
		return nil, c.fail("data after the JSON value")
	}
	return c.out, nil
}

// SyntaxError says where a JSON text could not be canonicalised.
type SyntaxError struct {
	Offset int
	Reason string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("canon: %s at byte %d", e.Reason, e.Offset)
}

// maxDepth bounds nesting so a hostile document cannot exhaust the stack.
const maxDepth = 512

type canonicaliser struct {
	in      []byte
	pos     int
	out     []byte
	members []member // reused stack of object members, by depth
	scratch []byte
}

// member is one object member as written to out: its decoded name and where
// its whole "name":value text lies in out.
type member struct {
	name       []byte
	start, end int
}

func (c *canonicaliser) fail(reason string) error {
	return &SyntaxError{Offset: c.pos, Reason: reason}
}

func (c *canonicaliser) space() {
	for c.pos < len(c.in) {
		switch c.in[c.pos] {
		case ' ', '\t', '\n', '\r':
			c.pos++
		default:
			return
		}
	}
}

func (c *canonicaliser) value(depth int) error {
	if depth > maxDepth {
		return c.fail("nesting too deep")
	}
	if c.pos >= len(c.in) {
		return c.fail("unexpected end")
	}
	switch b := c.in[c.pos]; {
	case b == '{':
		return c.object(depth)
	case b == '[':
		return c.array(depth)
	case b == '"':
		start := len(c.out)
		name, err := c.str()
		if err != nil {
			return err
		}
		c.out = appendString(c.out[:start], name)
		return nil
	case b == 't':
		return c.literal("true")
	case b == 'f':
		return c.literal("false")
	case b == 'n':
		return c.literal("null")
	case b == '-' || (b >= '0' && b <= '9'):
		return c.number()
	}
	return c.fail("unexpected character")
}

func (c *canonicaliser) literal(word string) error {
	if !bytes.HasPrefix(c.in[c.pos:], []byte(word)) {
		return c.fail("invalid literal")
	}
	c.pos += len(word)
	c.out = append(c.out, word...)
	return nil
}

func (c *canonicaliser) array(depth int) error {
	c.pos++ // [
	c.out = append(c.out, '[')
	c.space()
	if c.pos < len(c.in) && c.in[c.pos] == ']' {
		c.pos++
		c.out = append(c.out, ']')
		return nil
	}
	for {
		c.space()
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.space()
		if c.pos >= len(c.in) {
			return c.fail("unexpected end in an array")
		}
		switch c.in[c.pos] {
		case ',':
			c.pos++
			c.out = append(c.out, ',')
		case ']':
			c.pos++
			c.out = append(c.out, ']')
			return nil
		default:
			return c.fail("expected , or ] in an array")
		}
	}
}

func (c *canonicaliser) object(depth int) error {
	c.pos++ // {
	objStart := len(c.out)
	c.out = append(c.out, '{')
	c.space()
	if c.pos < len(c.in) && c.in[c.pos] == '}' {
		c.pos++
		c.out = append(c.out, '}')
		return nil
	}
	base := len(c.members)
	for {
		c.space()
		if c.pos >= len(c.in) || c.in[c.pos] != '"' {
			return c.fail("expected a member name")
		}
		start := len(c.out)
		raw, err := c.str()
		if err != nil {
			return err
		}
		// The decoded name is kept for sorting: str returns either a slice of
		// the input or a fresh buffer, so it stays valid.
		name := raw
		c.out = appendString(c.out[:start], name)
		c.space()
		if c.pos >= len(c.in) || c.in[c.pos] != ':' {
			return c.fail("expected : after a member name")
		}
		c.pos++
		c.out = append(c.out, ':')
		c.space()
		if err := c.value(depth + 1); err != nil {
			return err
		}
		c.members = append(c.members, member{name: name, start: start, end: len(c.out)})
		c.space()
		if c.pos >= len(c.in) {
			return c.fail("unexpected end in an object")
		}
		if c.in[c.pos] == ',' {
			c.pos++
			c.out = append(c.out, ',')
			continue
		}
		if c.in[c.pos] != '}' {
			return c.fail("expected , or } in an object")
		}
		c.pos++
		break
	}
	ms := c.members[base:]
	defer func() { c.members = c.members[:base] }()
	sorted := true
	for i := 1; i < len(ms); i++ {
		switch compareNames(ms[i-1].name, ms[i].name) {
		case 0:
			return &SyntaxError{Offset: c.pos, Reason: fmt.Sprintf("duplicate member name %q", ms[i].name)}
		case 1:
			sorted = false
		}
	}
	if sorted {
		c.out = append(c.out, '}')
		return nil
	}
	slices.SortFunc(ms, func(a, b member) int { return compareNames(a.name, b.name) })
	for i := 1; i < len(ms); i++ {
		if compareNames(ms[i-1].name, ms[i].name) == 0 {
			return &SyntaxError{Offset: c.pos, Reason: fmt.Sprintf("duplicate member name %q", ms[i].name)}
		}
	}
	// Rewrite the members in order: copy the object's text aside once, then
	// lay the members back down.
	c.scratch = append(c.scratch[:0], c.out[objStart:]...)
	c.out = append(c.out[:objStart], '{')
	for i, m := range ms {
		if i > 0 {
			c.out = append(c.out, ',')
		}
		c.out = append(c.out, c.scratch[m.start-objStart:m.end-objStart]...)
	}
	c.out = append(c.out, '}')
	return nil
}

// compareNames orders member names by UTF-16 code units, as RFC 8785 asks.
// UTF-8 byte order agrees with it except where a character beyond the BMP
// (4 bytes in UTF-8) meets one in U+E000..U+FFFF, so only names holding such
// characters take the slow path.
func compareNames(a, b []byte) int {
	if !hasSupplementary(a) && !hasSupplementary(b) {
		return bytes.Compare(a, b)
	}
	ua := utf16.Encode([]rune(string(a)))
	ub := utf16.Encode([]rune(string(b)))
	return slices.Compare(ua, ub)
}

func hasSupplementary(s []byte) bool {
	for _, b := range s {
		if b >= 0xF0 {
			return true
		}
	}
	return false
}

// str reads a JSON string at pos and returns its decoded UTF-8 bytes. The
// result aliases the input when the string has no escapes.
func (c *canonicaliser) str() ([]byte, error) {
	c.pos++ // opening quote
	start := c.pos
	// Fast path: no escapes.
	for c.pos < len(c.in) {
		b := c.in[c.pos]
		if b == '"' {
			s := c.in[start:c.pos]
			c.pos++
			if !isASCII(s) && !utf8.Valid(s) {
				return nil, &SyntaxError{Offset: start, Reason: "invalid UTF-8 in a string"}
			}
			return s, nil
		}
		if b == '\\' {
			break
		}
		if b < 0x20 {
			return nil, c.fail("control character in a string")
		}
		c.pos++
	}
	buf := append([]byte(nil), c.in[start:c.pos]...)
	for c.pos < len(c.in) {
		b := c.in[c.pos]
		switch {
		case b == '"':
			c.pos++
			if !utf8.Valid(buf) {
				return nil, &SyntaxError{Offset: start, Reason: "invalid UTF-8 in a string"}
			}
			return buf, nil
		case b < 0x20:
			return nil, c.fail("control character in a string")
		case b != '\\':
			buf = append(buf, b)
			c.pos++
			continue
		}
		if c.pos+1 >= len(c.in) {
			return nil, c.fail("unexpected end in a string")
		}
		esc := c.in[c.pos+1]
		c.pos += 2
		switch esc {
		case '"', '\\', '/':
			buf = append(buf, esc)
		case 'b':
			buf = append(buf, '\b')
		case 'f':
			buf = append(buf, '\f')
		case 'n':
			buf = append(buf, '\n')
		case 'r':
			buf = append(buf, '\r')
		case 't':
			buf = append(buf, '\t')
		case 'u':
			r, err := c.hex4()
			if err != nil {
				return nil, err
			}
			if utf16.IsSurrogate(r) {
				if r >= 0xDC00 || c.pos+6 > len(c.in) || c.in[c.pos] != '\\' || c.in[c.pos+1] != 'u' {
					return nil, c.fail("lone surrogate in a string")
				}
				c.pos += 2
				r2, err := c.hex4()
				if err != nil {
					return nil, err
				}
				r = utf16.DecodeRune(r, r2)
				if r == utf8.RuneError {
					return nil, c.fail("lone surrogate in a string")
				}
			}
			buf = utf8.AppendRune(buf, r)
		default:
			return nil, c.fail("invalid escape in a string")
		}
	}
	return nil, c.fail("unexpected end in a string")
}

func (c *canonicaliser) hex4() (rune, error) {
	if c.pos+4 > len(c.in) {
		return 0, c.fail("short \\u escape")
	}
	var r rune
	for _, h := range c.in[c.pos : c.pos+4] {
		r <<= 4
		switch {
		case h >= '0' && h <= '9':
			r |= rune(h - '0')
		case h >= 'a' && h <= 'f':
			r |= rune(h-'a') + 10
		case h >= 'A' && h <= 'F':
			r |= rune(h-'A') + 10
		default:
			return 0, c.fail("invalid \\u escape")
		}
	}
	c.pos += 4
	return r, nil
}

func isASCII(s []byte) bool {
	for _, b := range s {
		if b >= 0x80 {
			return false
		}
	}
	return true
}

const hexDigits = "0123456789abcdef"

// appendString writes s (valid UTF-8) as a JSON string with RFC 8785's
// escaping: only the quote, the backslash and control characters, with the
// short forms where JSON has them. It takes bytes and strings alike, so the
// parsed and the direct writers share one escaper.
func appendString[T ~string | ~[]byte](out []byte, s T) []byte {
	out = append(out, '"')
	last := 0
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 0x20 && b != '"' && b != '\\' {
			continue
		}
		out = append(out, s[last:i]...)
		last = i + 1
		switch b {
		case '"':
			out = append(out, '\\', '"')
		case '\\':
			out = append(out, '\\', '\\')
		case '\b':
			out = append(out, '\\', 'b')
		case '\f':
			out = append(out, '\\', 'f')
		case '\n':
			out = append(out, '\\', 'n')
		case '\r':
			out = append(out, '\\', 'r')
		case '\t':
			out = append(out, '\\', 't')
		default:
			out = append(out, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
		}
	}
	out = append(out, s[last:]...)
	return append(out, '"')
}

// number reads a JSON number and writes it as ECMAScript's Number::toString
// would print the nearest float64.
func (c *canonicaliser) number() error {
	start := c.pos
	if c.in[c.pos] == '-' {
		c.pos++
	}
	intStart := c.pos
	for c.pos < len(c.in) && c.in[c.pos] >= '0' && c.in[c.pos] <= '9' {
		c.pos++
	}
	digits := c.pos - intStart
	if digits == 0 || (digits > 1 && c.in[intStart] == '0') {
		return c.fail("invalid number")
	}
	plain := true
	if c.pos < len(c.in) && c.in[c.pos] == '.' {
		plain = false
		c.pos++
		n := c.pos
		for c.pos < len(c.in) && c.in[c.pos] >= '0' && c.in[c.pos] <= '9' {
			c.pos++
		}
		if c.pos == n {
			return c.fail("invalid number")
		}
	}
	if c.pos < len(c.in) && (c.in[c.pos] == 'e' || c.in[c.pos] == 'E') {
		plain = false
		c.pos++
		if c.pos < len(c.in) && (c.in[c.pos] == '+' || c.in[c.pos] == '-') {
			c.pos++
		}
		n := c.pos
		for c.pos < len(c.in) && c.in[c.pos] >= '0' && c.in[c.pos] <= '9' {
			c.pos++
		}
		if c.pos == n {
			return c.fail("invalid number")
		}
	}
	lit := c.in[start:c.pos]
	// Integers of up to 15 digits are exact in a float64 and print as
	// themselves; only -0 changes.
	if plain && digits <= 15 {
		if digits == 1 && c.in[intStart] == '0' {
			c.out = append(c.out, '0')
		} else {
			c.out = append(c.out, lit...)
		}
		return nil
	}
	f, err := strconv.ParseFloat(string(lit), 64)
	if err != nil {
		return &SyntaxError{Offset: start, Reason: "number out of range"}
	}
	out, err := AppendNumber(c.out, f)
	if err != nil {
		return &SyntaxError{Offset: start, Reason: err.Error()}
	}
	c.out = out
	return nil
}

// ErrNotFinite is returned for NaN and the infinities, which JSON cannot hold.
var ErrNotFinite = errors.New("NaN and Infinity have no JSON form")

// AppendNumber writes f as ECMAScript's Number::toString does (ECMA-262,
// 7.1.12.1), which is what RFC 8785 requires: the shortest digits that read
// back as f, in plain notation for exponents from -6 to 20 and as d.ddde±n
// otherwise.
func AppendNumber(out []byte, f float64) ([]byte, error) {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return out, ErrNotFinite
	}
	if f == 0 {
		return append(out, '0'), nil // also -0
	}
	if f < 0 {
		out = append(out, '-')
		f = -f
	}
	// Shortest round-trip digits in scientific form: d.ddddde±xx.
	var buf [32]byte
	sci := strconv.AppendFloat(buf[:0], f, 'e', -1, 64)
	ePos := bytes.IndexByte(sci, 'e')
	mant, exp := sci[:ePos], sci[ePos+1:]
	e, _ := strconv.Atoi(string(exp))
	var digits []byte
	digits = append(digits, mant[0])
	if len(mant) > 2 {
		digits = append(digits, mant[2:]...)
	}
	k := len(digits)
	n := e + 1 // the decimal point sits after n digits
	switch {
	case k <= n && n <= 21:
		out = append(out, digits...)
		for range n - k {
			out = append(out, '0')
		}
	case 0 < n && n <= 21:
		out = append(out, digits[:n]...)
		out = append(out, '.')
		out = append(out, digits[n:]...)
	case -6 < n && n <= 0:
		out = append(out, '0', '.')
		for range -n {
			out = append(out, '0')
		}
		out = append(out, digits...)
	default:
		out = append(out, digits[0])
		if k > 1 {
			out = append(out, '.')
			out = append(out, digits[1:]...)
		}
		out = append(out, 'e')
		if n-1 >= 0 {
			out = append(out, '+')
		}
		out = strconv.AppendInt(out, int64(n-1), 10)
	}
	return out, nil
}

// AppendString writes s as an RFC 8785 string. s must be valid UTF-8
// (utf8.ValidString); encoding/json would have replaced invalid bytes.
func AppendString(out []byte, s string) []byte { return appendString(out, s) }

// AppendInt writes an integer as RFC 8785 does: exactly up to 2^53, and as
// the nearest double beyond (as ECMAScript would read it).
func AppendInt(out []byte, v int64) []byte {
	const exact = 1 << 53
	if v > -exact && v < exact {
		return strconv.AppendInt(out, v, 10)
	}
	out, _ = AppendNumber(out, float64(v))
	return out
}

// CompareNames orders member names as RFC 8785 sorts them (UTF-16 code units).
func CompareNames(a, b string) int { return compareNames([]byte(a), []byte(b)) }
