package snapshots

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/petal-near/petal/domain/errs"
)

// Limits bound a reading's structure. They are checked on the bytes as they
// stream in, before anything is decoded, so what a posted reading costs to
// decode is bounded by what was sent, never by what it unfolds into. Every
// size is in bytes of the JSON as sent.
type Limits struct {
	Depth    int // nesting of arrays and objects
	Elements int // members of one object or elements of one array, but for those below
	Accounts int // elements of /accounts
	Groups   int // elements of /groups, and of one account's groups
	// Memberships bounds the group names of all accounts together, which
	// decode into strings worth several times their bytes.
	Memberships     int
	String          int // one string, member name or number
	AttrsPerAccount int // one account's attrs
	AttrsTotal      int // every account's attrs together
	Detail          int
	Params          int
	Source          int
}

// PostedLimits are what a posted reading is held to. They leave room for
// every reading petal's own readers make (up to 20,000 proposals in detail,
// each voter's votes in attrs) and refuse what only an attack needs, such
// as one account whose attrs is millions of numbers.
var PostedLimits = Limits{
	Depth:           20,
	Elements:        20_000,
	Accounts:        MaxAccounts,
	Groups:          MaxGroups,
	Memberships:     10 * MaxAccounts,
	String:          64 << 10,
	AttrsPerAccount: 1 << 20,
	AttrsTotal:      16 << 20,
	Detail:          16 << 20,
	Params:          256 << 10,
	Source:          1 << 20,
}

// CheckShape holds raw to the limits: ShapeChecker over bytes at hand.
func CheckShape(raw []byte, l Limits) error {
	c := NewShapeChecker(l)
	if _, err := c.Write(raw); err != nil {
		return err
	}
	return c.Close()
}

// ShapeChecker is an io.Writer that scans one JSON text as its bytes pass
// and fails the write that takes it past a limit, with a bad_input error
// naming the limit and where in the reading it was passed. It keeps no more
// than one small frame per level of nesting. It checks JSON's syntax only as
// far as it needs to follow the structure; the decoder that reads the bytes
// afterwards says the rest.
type ShapeChecker struct {
	lim    Limits
	stack  []frame
	state  scanState
	inKey  bool // the string being read is a member's name
	strLen int  // bytes of the string or number being read
	offset int64
	done   bool // the top-level value is complete
	err    error

	zone        zone // the sized part of the reading being read, if any
	zoneDepth   int  // len(stack) when the zone's value began
	zoneBytes   int
	attrsTotal  int
	memberships int
	accounts    int
}

type scanState uint8

const (
	stValue      scanState = iota // a value is expected
	stKeyOrEnd                    // after '{': a member's name or '}'
	stKey                         // after ',' in an object: a member's name
	stColon                       // after a member's name
	stAfterValue                  // after a value: ',' or the container's end
	stString                      // inside a string
	stEscape                      // after a backslash inside a string
	stScalar                      // inside a number or true/false/null
)

type zone uint8

const (
	zoneNone zone = iota
	zoneAttrs
	zoneDetail
	zoneParams
	zoneSource
)

// frame is one open array or object.
type frame struct {
	object  bool
	n       int    // members or elements so far
	limit   int    // most members or elements it may hold
	key     []byte // an object's current member name, up to maxKeyKept bytes
	longKey bool
	groups  bool // an account's groups: each element counts as a membership
}

const maxKeyKept = 32

// NewShapeChecker starts checking one JSON text against l.
func NewShapeChecker(l Limits) *ShapeChecker {
	return &ShapeChecker{lim: l, stack: make([]frame, 0, 8)}
}

// Write scans p. It fails, and keeps failing, once the text passes a limit
// or stops being JSON.
func (c *ShapeChecker) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	for i, b := range p {
		if err := c.step(b); err != nil {
			c.err = err
			return i, err
		}
		c.offset++
	}
	return len(p), nil
}

// Accounts is how many elements /accounts held, once the text is read.
func (c *ShapeChecker) Accounts() int { return c.accounts }

// Close says whether the text ended as one complete JSON object.
func (c *ShapeChecker) Close() error {
	if c.err != nil {
		return c.err
	}
	if c.state == stScalar {
		c.endScalar()
	}
	if !c.done {
		return errs.New(errs.BadInput, "the snapshot's JSON ends too soon", "send one complete snapshot/v1 object")
	}
	return nil
}

func (c *ShapeChecker) step(b byte) error {
	if c.zone != zoneNone {
		if err := c.countZone(); err != nil {
			return err
		}
	}
	switch c.state {
	case stString:
		switch b {
		case '"':
			return c.endString()
		case '\\':
			c.state = stEscape
		default:
			if err := c.stringByte(b); err != nil {
				return err
			}
		}
		return nil
	case stEscape:
		c.state = stString
		return c.stringByte(b)
	case stScalar:
		if isScalarByte(b) {
			c.strLen++
			if c.strLen > c.lim.String {
				return c.limitError("a number longer than %d bytes", c.lim.String)
			}
			return nil
		}
		c.endScalar()
		// b ends the number and is read as what follows it.
	}
	if b == ' ' || b == '\t' || b == '\n' || b == '\r' {
		return nil
	}
	switch c.state {
	case stValue:
		return c.beginValue(b)
	case stKeyOrEnd, stKey:
		if b == '}' && c.state == stKeyOrEnd {
			return c.close()
		}
		if b != '"' {
			return c.syntaxError("a member's name in double quotes")
		}
		top := &c.stack[len(c.stack)-1]
		top.n++
		if top.n > top.limit {
			return c.countError(top)
		}
		top.key, top.longKey = top.key[:0], false
		c.state, c.inKey, c.strLen = stString, true, 0
		return nil
	case stColon:
		if b != ':' {
			return c.syntaxError("':' after a member's name")
		}
		c.state = stValue
		return nil
	case stAfterValue:
		if len(c.stack) == 0 {
			return errs.New(errs.BadInput, "the snapshot has data after its JSON object")
		}
		top := &c.stack[len(c.stack)-1]
		switch {
		case b == ',' && top.object:
			c.state = stKey
		case b == ',':
			c.state = stValue
		case b == '}' && top.object, b == ']' && !top.object:
			return c.close()
		default:
			return c.syntaxError("',' or the end of the array or object")
		}
		return nil
	}
	return c.syntaxError("a value")
}

func (c *ShapeChecker) beginValue(b byte) error {
	if len(c.stack) == 0 && b != '{' {
		return errs.New(errs.BadInput, "a snapshot is one JSON object", "send one snapshot/v1 object")
	}
	parent := c.parent()
	if b == ']' {
		// ']' where a value is expected: the end of an empty array, or a
		// trailing comma.
		if parent == nil || parent.object || parent.n > 0 {
			return c.syntaxError("a value")
		}
		return c.close()
	}
	if parent != nil && !parent.object {
		parent.n++
		if parent.n > parent.limit {
			return c.countError(parent)
		}
		if len(c.stack) == 2 && string(c.stack[0].key) == "accounts" {
			c.accounts++
		}
		if parent.groups {
			c.memberships++
			if c.memberships > c.lim.Memberships {
				return c.limitError("more than %d group names across all accounts", c.lim.Memberships)
			}
		}
	}
	role := c.role()
	if c.zone == zoneNone && role.zone != zoneNone {
		c.zone, c.zoneDepth, c.zoneBytes = role.zone, len(c.stack), 0
		if err := c.countZone(); err != nil { // the value's first byte
			return err
		}
	}
	switch {
	case b == '{' || b == '[':
		if len(c.stack) >= c.lim.Depth {
			return c.limitError("nesting deeper than %d levels", c.lim.Depth)
		}
		limit := c.lim.Elements
		if role.limit > 0 {
			limit = role.limit
		}
		c.stack = append(c.stack, frame{object: b == '{', limit: limit, groups: role.groups})
		if b == '{' {
			c.state = stKeyOrEnd
		} else {
			c.state = stValue
		}
	case b == '"':
		c.state, c.inKey, c.strLen = stString, false, 0
	case b == '-' || (b >= '0' && b <= '9') || b == 't' || b == 'f' || b == 'n':
		c.state, c.strLen = stScalar, 1
	default:
		return c.syntaxError("a value")
	}
	return nil
}

// valueRole is what the path of a value starting now makes it.
type valueRole struct {
	zone   zone
	limit  int // its own element limit, if it is an array with one
	groups bool
}

func (c *ShapeChecker) role() valueRole {
	switch len(c.stack) {
	case 1:
		switch string(c.stack[0].key) {
		case "accounts":
			return valueRole{limit: c.lim.Accounts}
		case "groups":
			return valueRole{limit: c.lim.Groups}
		case "detail":
			return valueRole{zone: zoneDetail}
		case "params":
			return valueRole{zone: zoneParams}
		case "source":
			return valueRole{zone: zoneSource}
		}
	case 3:
		if string(c.stack[0].key) != "accounts" || c.stack[1].object || !c.stack[2].object {
			return valueRole{}
		}
		switch string(c.stack[2].key) {
		case "attrs":
			return valueRole{zone: zoneAttrs}
		case "groups":
			return valueRole{limit: c.lim.Groups, groups: true}
		}
	}
	return valueRole{}
}

func (c *ShapeChecker) parent() *frame {
	if len(c.stack) == 0 {
		return nil
	}
	return &c.stack[len(c.stack)-1]
}

func (c *ShapeChecker) stringByte(b byte) error {
	c.strLen++
	if c.strLen > c.lim.String {
		if c.inKey {
			return c.limitError("a member name longer than %d bytes", c.lim.String)
		}
		return c.limitError("a string longer than %d bytes", c.lim.String)
	}
	if c.inKey {
		top := &c.stack[len(c.stack)-1]
		if len(top.key) < maxKeyKept {
			top.key = append(top.key, b)
		} else {
			top.longKey = true
		}
	}
	return nil
}

func (c *ShapeChecker) endString() error {
	if c.inKey {
		c.inKey = false
		top := &c.stack[len(c.stack)-1]
		if top.longKey {
			top.key = append(top.key[:0], '~') // matches no key the roles look for
		}
		c.state = stColon
		return nil
	}
	c.endValue()
	return nil
}

func (c *ShapeChecker) endScalar() { c.endValue() }

func (c *ShapeChecker) close() error {
	c.stack = c.stack[:len(c.stack)-1]
	c.endValue()
	return nil
}

// endValue follows a complete value: the zone it ends, the text it ends.
func (c *ShapeChecker) endValue() {
	c.state = stAfterValue
	if c.zone != zoneNone && len(c.stack) == c.zoneDepth {
		c.zone = zoneNone
	}
	if len(c.stack) == 0 {
		c.done = true
	}
}

func (c *ShapeChecker) countZone() error {
	c.zoneBytes++
	switch c.zone {
	case zoneAttrs:
		c.attrsTotal++
		if c.zoneBytes > c.lim.AttrsPerAccount {
			return c.limitError("an account's attrs larger than %s", humanSize(c.lim.AttrsPerAccount))
		}
		if c.attrsTotal > c.lim.AttrsTotal {
			return c.limitError("more than %s of attrs across all accounts", humanSize(c.lim.AttrsTotal))
		}
	case zoneDetail:
		if c.zoneBytes > c.lim.Detail {
			return c.limitError("a detail larger than %s", humanSize(c.lim.Detail))
		}
	case zoneParams:
		if c.zoneBytes > c.lim.Params {
			return c.limitError("params larger than %s", humanSize(c.lim.Params))
		}
	case zoneSource:
		if c.zoneBytes > c.lim.Source {
			return c.limitError("a source larger than %s", humanSize(c.lim.Source))
		}
	}
	return nil
}

func isScalarByte(b byte) bool {
	return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b == '.' || b == '+' || b == '-'
}

// path is where the scan is, as a JSON Pointer.
func (c *ShapeChecker) path() string { return c.pathOf(c.stack) }

// pathOf is the JSON Pointer that the frames' current members and elements make.
func (c *ShapeChecker) pathOf(frames []frame) string {
	var sb strings.Builder
	for _, f := range frames {
		sb.WriteByte('/')
		switch {
		case f.object && f.longKey:
			sb.WriteString("…")
		case f.object:
			sb.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(string(f.key)))
		default:
			sb.WriteString(strconv.Itoa(max(f.n-1, 0)))
		}
	}
	if sb.Len() == 0 {
		return "/"
	}
	return sb.String()
}

// countError names the array or object itself, the top frame.
func (c *ShapeChecker) countError(f *frame) error {
	what := "array"
	if f.object {
		what = "object"
	}
	return errs.Newf(errs.BadInput, "the snapshot passes a posted reading's limit at %s: an %s of more than %d elements",
		c.pathOf(c.stack[:len(c.stack)-1]), what, f.limit).WithHint("docs/snapshots.md lists a posted reading's limits")
}

// limitError refuses the reading naming the limit it passed and where.
func (c *ShapeChecker) limitError(format string, args ...any) error {
	return errs.Newf(errs.BadInput, "the snapshot passes a posted reading's limit at %s: %s", c.path(), fmt.Sprintf(format, args...)).
		WithHint("docs/snapshots.md lists a posted reading's limits")
}

func (c *ShapeChecker) syntaxError(want string) error {
	return errs.Newf(errs.BadInput, "the snapshot is not valid JSON at byte %d (%s expected)", c.offset, want).
		WithHint("send one snapshot/v1 object")
}

func humanSize(n int) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
