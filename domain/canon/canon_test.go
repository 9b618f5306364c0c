package canon

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"math"
	"strings"
	"testing"
)

// The examples of RFC 8785 itself (sections 3.2.2, 3.2.3 and appendix B).
func TestRFC8785Examples(t *testing.T) {
	cases := []struct{ name, in, want string }{
		{
			name: "section 3.2.2: numbers, string escaping and literals",
			in: `{
  "numbers": [333333333.33333329, 1E30, 4.50, 2e-3, 0.000000000000000000000000001],
  "string": "\u20ac$\u000F\u000aA'\u0042\u0022\u005c\\\"\/",
  "literals": [null, true, false]
}`,
			want: `{"literals":[null,true,false],"numbers":[333333333.3333333,1e+30,4.5,0.002,1e-27],"string":"€$\u000f\nA'B\"\\\\\"/"}`,
		},
		{
			name: "section 3.2.3: sorting by UTF-16 code units",
			in: `{
  "\u20ac": "Euro Sign",
  "\r": "Carriage Return",
  "\ufb33": "Hebrew Letter Dalet With Dagesh",
  "1": "One",
  "\ud83d\ude00": "Emoji: Grinning Face",
  "\u0080": "Control",
  "\u00f6": "Latin Small Letter O With Diaeresis"
}`,
			want: "{\"\\r\":\"Carriage Return\",\"1\":\"One\",\"\u0080\":\"Control\",\"\u00f6\":\"Latin Small Letter O With Diaeresis\",\"\u20ac\":\"Euro Sign\",\"\U0001F600\":\"Emoji: Grinning Face\",\"\uFB33\":\"Hebrew Letter Dalet With Dagesh\"}",
		},
		{
			name: "nested objects sort at every level, arrays keep order",
			in:   `{"b":[{"z":1,"a":2},3],"a":{"y":{"d":1,"c":2},"x":null}}`,
			want: `{"a":{"x":null,"y":{"c":2,"d":1}},"b":[{"a":2,"z":1},3]}`,
		},
		{
			name: "whitespace everywhere, empty containers",
			in:   " { \"a\" : [ ] , \"b\" : { } } \n",
			want: `{"a":[],"b":{}}`,
		},
		{
			name: "HTML characters and U+2028 are not escaped (unlike encoding/json)",
			in:   `{"s":"\u003c/script\u003e\u0026\u2028"}`,
			want: "{\"s\":\"</script>&\u2028\"}",
		},
		{
			name: "control characters: short forms, else lower-case \\u00xx; DEL stays raw",
			in:   `"\u0000\u0008\u0009\u000a\u000c\u000d\u001f\u007f"`,
			want: "\"\\u0000\\b\\t\\n\\f\\r\\u001f\u007f\"",
		},
		{name: "minus zero", in: `-0`, want: `0`},
		{name: "minus zero as a float", in: `-0.0e5`, want: `0`},
		{name: "integer past 2^53 rounds as a double", in: `9007199254740993`, want: `9007199254740992`},
		{name: "big integer prints plain up to 21 digits", in: `295147905179352830000`, want: `295147905179352830000`},
		{name: "fraction trimmed", in: `[1.0, 1.50, 100e-2]`, want: `[1,1.5,1]`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Transform([]byte(tc.in))
			if err != nil {
				t.Fatalf("Transform: %v", err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %s\nwant %s", got, tc.want)
			}
			again, err := Transform(got)
			if err != nil || string(again) != string(got) {
				t.Fatalf("canonical output is not a fixed point: %s (%v)", again, err)
			}
		})
	}
}

// RFC 8785 appendix B: IEEE-754 doubles and their ECMAScript forms.
func TestNumberSerialisationAppendixB(t *testing.T) {
	cases := []struct{ bits, want string }{
		{"0000000000000000", "0"},
		{"8000000000000000", "0"},
		{"0000000000000001", "5e-324"},
		{"8000000000000001", "-5e-324"},
		{"7fefffffffffffff", "1.7976931348623157e+308"},
		{"ffefffffffffffff", "-1.7976931348623157e+308"},
		{"4340000000000000", "9007199254740992"},
		{"c340000000000000", "-9007199254740992"},
		{"4430000000000000", "295147905179352830000"},
		{"44b52d02c7e14af5", "9.999999999999997e+22"},
		{"44b52d02c7e14af6", "1e+23"},
		{"44b52d02c7e14af7", "1.0000000000000001e+23"},
		{"444b1ae4d6e2ef4e", "999999999999999700000"},
		{"444b1ae4d6e2ef4f", "999999999999999900000"},
		{"444b1ae4d6e2ef50", "1e+21"},
		{"3eb0c6f7a0b5ed8c", "9.999999999999997e-7"},
		{"3eb0c6f7a0b5ed8d", "0.000001"},
		{"41b3de4355555553", "333333333.3333332"},
		{"41b3de4355555554", "333333333.33333325"},
		{"41b3de4355555555", "333333333.3333333"},
		{"41b3de4355555556", "333333333.3333334"},
		{"41b3de4355555557", "333333333.33333343"},
		{"becbf647612f3696", "-0.0000033333333333333333"},
		{"43143ff3c1cb0959", "1424953923781206.2"},
		{"4340000000000001", "9007199254740994"},
		{"4340000000000002", "9007199254740996"},
	}
	for _, tc := range cases {
		raw, _ := hex.DecodeString(tc.bits)
		f := math.Float64frombits(binary.BigEndian.Uint64(raw))
		got, err := AppendNumber(nil, f)
		if err != nil {
			t.Fatalf("%s: %v", tc.bits, err)
		}
		if string(got) != tc.want {
			t.Errorf("%s: got %s, want %s", tc.bits, got, tc.want)
		}
		// The same value written as JSON text canonicalises the same way.
		viaText, err := Transform([]byte(tc.want))
		if err != nil || string(viaText) != tc.want {
			t.Errorf("%s: Transform(%s) = %s (%v)", tc.bits, tc.want, viaText, err)
		}
	}
	for _, bad := range []float64{math.NaN(), math.Inf(1), math.Inf(-1)} {
		if _, err := AppendNumber(nil, bad); !errors.Is(err, ErrNotFinite) {
			t.Errorf("%v: want ErrNotFinite, got %v", bad, err)
		}
	}
}

func TestRefusals(t *testing.T) {
	cases := map[string]string{
		"duplicate names":           `{"a":1,"a":2}`,
		"duplicate names, unsorted": `{"b":1,"a":2,"b":3}`,
		"lone high surrogate":       `"\ud800"`,
		"lone low surrogate":        `"\udc00x"`,
		"invalid UTF-8":             "\"\xff\"",
		"trailing data":             `{} {}`,
		"number out of range":       `1e400`,
		"leading zero":              `012`,
		"raw control character":     "\"a\nb\"",
		"bad escape":                `"\x"`,
		"unterminated":              `{"a":[1,2`,
		"empty":                     ``,
		"bare word":                 `nul`,
	}
	for name, in := range cases {
		t.Run(name, func(t *testing.T) {
			if out, err := Transform([]byte(in)); err == nil {
				t.Fatalf("want an error, got %s", out)
			}
		})
	}
	deep := strings.Repeat("[", maxDepth+2) + strings.Repeat("]", maxDepth+2)
	if _, err := Transform([]byte(deep)); err == nil {
		t.Fatal("want an error for nesting past maxDepth")
	}
}

func TestMarshalAndSHA256(t *testing.T) {
	type inner struct {
		Z string `json:"z"`
		A int    `json:"a"`
	}
	v := map[string]any{"b": inner{Z: "<&>", A: 1}, "a": []float64{0.1, 1e21}}
	sum, b, err := SHA256Hex(v)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"a":[0.1,1e+21],"b":{"a":1,"z":"<&>"}}`
	if string(b) != want {
		t.Fatalf("got %s, want %s", b, want)
	}
	// sha256 of the canonical text, computed independently with sha256sum.
	if sum != "d825444c79a2f832b76626d35fdb4c63ae412e9aed42a5f944faf5641ee2929c" {
		t.Fatalf("sum %s", sum)
	}
	if _, err := Marshal(math.NaN()); err == nil {
		t.Fatal("NaN must not marshal")
	}
}

func FuzzTransform(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `[1.5e3,"\u00e9",{"\ud83d\ude00":0,"\uffff":1}]`, `"x"`, `-0`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		out, err := Transform(in)
		if err != nil {
			return
		}
		again, err := Transform(out)
		if err != nil {
			t.Fatalf("canonical output %q does not canonicalise: %v", out, err)
		}
		if string(again) != string(out) {
			t.Fatalf("not a fixed point: %q then %q", out, again)
		}
	})
}
