package snapshots

import (
	"bytes"
	"encoding/json"
	"io"
	"strconv"
	"strings"
	"testing"

	"github.com/petal-near/petal/domain/errs"
)

// attackAccount is the attack: one account whose attrs is millions of
// zeros (32 MB of JSON, 31 KB gzipped), streamed, never held whole.
func attackReader(zeros int) io.Reader {
	head := `{"about":"","accounts":[{"attrs":[`
	tail := `],"groups":[],"id":"near:mainnet:a.near","label":"a","weight":"1"}],"block":{"hash":"h","height":1,"time":"2026-11-01T00:00:00Z"},` +
		`"chain":"near:mainnet","groups":[],"network":"near-dao-members","params":{},"schema":"snapshot/v1","source":{"calls":[]},"title":"t"}`
	zerosR := io.LimitReader(repeatReader("0,"), int64(2*zeros-1))
	return io.MultiReader(strings.NewReader(head), zerosR, strings.NewReader(tail))
}

type repeatReader string

func (r repeatReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		n += copy(p[n:], r)
	}
	return n, nil
}

func TestShapeCheckerRefusesTheAttackEarly(t *testing.T) {
	c := NewShapeChecker(PostedLimits)
	n, err := io.Copy(c, attackReader(16_000_000))
	e, ok := errs.As(err)
	if !ok || e.Code != errs.BadInput {
		t.Fatalf("want bad_input, got %v", err)
	}
	if !strings.Contains(e.Message, "at /accounts/0/attrs:") || !strings.Contains(e.Message, "more than 20000 elements") {
		t.Fatalf("the message names neither where nor which limit: %s", e.Message)
	}
	if n > 64<<10 {
		t.Fatalf("read %d bytes before refusing; the limit is passed within the first 41 KB", n)
	}
}

func TestShapeCheckerNamesEachLimit(t *testing.T) {
	valid := func(change func(s *Snapshot)) []byte {
		s := sample()
		change(&s)
		b, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	long := func(n int) string { return strings.Repeat("x", n) }
	attrsOf := func(n int) json.RawMessage { return json.RawMessage(`{"k":"` + long(n) + `"}`) }
	small := PostedLimits
	small.AttrsPerAccount, small.AttrsTotal, small.Detail, small.Params, small.Source = 1000, 1500, 1000, 1000, 1000
	small.Memberships, small.Accounts = 3, 2
	cases := []struct {
		name string
		body []byte
		lim  Limits
		want string // in the message; "" for accepted
	}{
		{"a sample reading", valid(func(*Snapshot) {}), PostedLimits, ""},
		{"a string too long", valid(func(s *Snapshot) { s.About = long(70 << 10) }), PostedLimits, "/about: a string longer than 65536 bytes"},
		{"a member name too long", []byte(`{"` + long(70<<10) + `":1}`), PostedLimits, "a member name longer than 65536 bytes"},
		{"a number too long", []byte(`{"block":{"height":` + strings.Repeat("9", 70<<10) + `}}`), PostedLimits, "/block/height: a number longer"},
		{"too deep", []byte(`{"detail":` + strings.Repeat(`{"a":`, 25) + `1` + strings.Repeat(`}`, 25) + `}`), PostedLimits, "nesting deeper than 20 levels"},
		{"too many elements", []byte(`{"detail":{"a":[` + strings.TrimSuffix(strings.Repeat("1,", 20_001), ",") + `]}}`), PostedLimits, "/detail/a: an array of more than 20000 elements"},
		{"too many members", []byte(`{"params":{` + members(20_001) + `}}`), PostedLimits, "/params: an object of more than 20000 elements"},
		{"too many groups", valid(func(s *Snapshot) {
			for range MaxGroups + 1 {
				s.Groups = append(s.Groups, Group{ID: "g"})
			}
		}), PostedLimits, "/groups: an array of more than 1000 elements"},
		{"too many accounts", valid(func(s *Snapshot) { s.Accounts = append(s.Accounts, s.Accounts...) }), small, "/accounts: an array of more than 2 elements"},
		{"too many memberships", valid(func(s *Snapshot) { s.Accounts[1].Groups = []string{"a", "b", "c"} }), small, "more than 3 group names across all accounts"},
		{"attrs of one account", valid(func(s *Snapshot) { s.Accounts[1].Attrs = attrsOf(1000) }), small, "/accounts/1/attrs/k: an account's attrs larger than 1000 bytes"},
		{"attrs of all accounts", valid(func(s *Snapshot) {
			s.Accounts[0].Attrs, s.Accounts[1].Attrs = attrsOf(900), attrsOf(900)
		}), small, "more than 1500 bytes of attrs across all accounts"},
		{"attrs within both", valid(func(s *Snapshot) { s.Accounts[0].Attrs, s.Accounts[1].Attrs = attrsOf(700), attrsOf(700) }), small, ""},
		{"detail", valid(func(s *Snapshot) { s.Detail = attrsOf(1000) }), small, "a detail larger than 1000 bytes"},
		{"params", valid(func(s *Snapshot) { s.Params = attrsOf(1000) }), small, "params larger than 1000 bytes"},
		{"source", valid(func(s *Snapshot) { s.Source.Calls[0].Args = long(1000) }), small, "a source larger than 1000 bytes"},
		{"an account's groups named like the top level's are not the top level's", valid(func(s *Snapshot) {
			s.Accounts[0].Attrs = json.RawMessage(`{"detail":"` + long(900) + `"}`)
		}), small, ""},
		{"not an object", []byte(`[1]`), PostedLimits, "a snapshot is one JSON object"},
		{"cut short", []byte(`{"a":[1,2`), PostedLimits, "ends too soon"},
		{"data after", []byte(`{} {}`), PostedLimits, "data after its JSON object"},
		{"a trailing comma", []byte(`{"a":[1,]}`), PostedLimits, "not valid JSON"},
		{"a missing colon", []byte(`{"a" 1}`), PostedLimits, "not valid JSON"},
		{"empty containers", []byte(` { "a" : [ ] , "b" : { } , "c" : [ [ ] , { } ] } `), PostedLimits, ""},
		{"escapes", []byte(`{"a\"b":"c\\\"d\u00e9"}`), PostedLimits, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			// Byte by byte, as the slowest network would hand it over.
			c := NewShapeChecker(tc.lim)
			var err error
			for i := range tc.body {
				if _, err = c.Write(tc.body[i : i+1]); err != nil {
					break
				}
			}
			if err == nil {
				err = c.Close()
			}
			if whole := CheckShape(tc.body, tc.lim); (whole == nil) != (err == nil) {
				t.Fatalf("whole %v, byte by byte %v", whole, err)
			}
			if tc.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if e, ok := errs.As(err); !ok || e.Code != errs.BadInput || !strings.Contains(e.Message, tc.want) {
				t.Fatalf("want bad_input with %q, got %v", tc.want, err)
			}
		})
	}
}

func members(n int) string {
	var b bytes.Buffer
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(`"k`)
		b.WriteString(itoa(i))
		b.WriteString(`":1`)
	}
	return b.String()
}

func itoa(i int) string { return strconv.Itoa(i) }

// Any JSON object passes with limits it can't reach: the checker follows
// JSON's structure, never refusing what the decoder would read.
func FuzzShapeCheckerFollowsJSON(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":[1,{"b":"c\"]"}],"d":-1.5e3,"e":[[],{}],"f":null,"g":true}`, `{"accounts":[{"attrs":{"x":[0,0]}}]}`} {
		f.Add([]byte(s))
	}
	huge := Limits{Depth: 1 << 20, Elements: 1 << 30, Accounts: 1 << 30, Groups: 1 << 30, Memberships: 1 << 30, String: 1 << 30,
		AttrsPerAccount: 1 << 30, AttrsTotal: 1 << 30, Detail: 1 << 30, Params: 1 << 30, Source: 1 << 30}
	f.Fuzz(func(t *testing.T, in []byte) {
		err := CheckShape(in, huge)
		var v any
		if json.Unmarshal(in, &v) != nil {
			return
		}
		if _, isObject := v.(map[string]any); isObject && err != nil {
			t.Fatalf("valid JSON object refused: %v", err)
		}
	})
}
