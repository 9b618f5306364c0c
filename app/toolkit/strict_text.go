package toolkit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/petal-near/petal/domain/errs"
)

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

// CheckJSONTextIn is CheckJSONText, also saying whether what it refused lies
// inside the member at path (names from the top, as "params", "arguments"):
// a door that hands that member to a checker of its own (MCP's tool
// arguments, decoded by DecodeStrict) can let it answer in its own shape.
func CheckJSONTextIn(raw []byte, path ...string) (err error, inside bool) {
	c := textChecker{b: raw}
	c.space()
	err = c.value(0)
	if err == errNotJSON || err == nil {
		return nil, false
	}
	if len(c.path) <= len(path) {
		return err, false
	}
	for i, name := range path {
		if c.path[i].name == nil || unescapedName(c.path[i].name) != name {
			return err, false
		}
	}
	return err, true
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
