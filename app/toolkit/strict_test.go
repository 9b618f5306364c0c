package toolkit_test

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
)

type strictTarget struct {
	Text  string         `json:"text"`
	N     int            `json:"n"`
	Inner map[string]int `json:"inner"`
}

// Each reader splits the body differently; none may change the outcome.
var readers = map[string]func(io.Reader) io.Reader{
	"whole":    func(r io.Reader) io.Reader { return r },
	"one byte": iotest.OneByteReader,
	"halves":   iotest.HalfReader,
	"data+eof": iotest.DataErrReader,
}

func TestDecodeStrictTakesUTF8HoweverItIsSplit(t *testing.T) {
	for _, text := range []string{"plain", "é", "✿ petal", "𝔭𝔢𝔱𝔞𝔩 🌸", strings.Repeat("日本", 300)} {
		for name, split := range readers {
			var got strictTarget
			require.NoError(t, toolkit.DecodeStrict(split(strings.NewReader(`{"text":"`+text+`","n":1}`)), &got), "%s %q", name, text)
			assert.Equal(t, text, got.Text)
		}
	}
}

func TestDecodeStrictRefusesWhatIsNotUTF8(t *testing.T) {
	cases := []struct {
		name, body string
		at         int
	}{
		{"a lone continuation byte", "{\"text\":\"a\x80\"}", 10},
		{"latin-1 é", "{\"text\":\"caf\xe9\"}", 12},
		{"a cut rune before ASCII", "{\"text\":\"\xe2\x9c\"}", 9},
		{"an overlong encoding", "{\"text\":\"\xc0\xaf\"}", 9},
		{"a surrogate half", "{\"text\":\"\xed\xa0\x80\"}", 9},
		{"invalid after a valid multibyte rune", "{\"text\":\"✿\xff\"}", 12},
	}
	for _, tc := range cases {
		for name, split := range readers {
			var got strictTarget
			err := toolkit.DecodeStrict(split(strings.NewReader(tc.body)), &got)
			e, ok := errs.As(err)
			require.True(t, ok, "%s, %s: %v", tc.name, name, err)
			assert.Equal(t, errs.BadInput, e.Code)
			assert.Contains(t, e.Message, "not valid UTF-8", "%s, %s", tc.name, name)
			assert.Contains(t, e.Message, "at byte ", "%s, %s", tc.name, name)
			if name == "whole" {
				assert.Contains(t, e.Message, "at byte "+strconv.Itoa(tc.at)+")", tc.name)
			}
		}
	}
}

// Bytes after the value that are not UTF-8 are refused as trailing data or as
// not UTF-8, depending on where a read ends; refused either way.
func TestDecodeStrictRefusesACutRuneAfterTheValue(t *testing.T) {
	for name, split := range readers {
		var got strictTarget
		err := toolkit.DecodeStrict(split(strings.NewReader("{\"text\":\"ok\"}\xf0\x9f")), &got)
		assert.True(t, errs.Is(err, errs.BadInput), "%s: %v", name, err)
	}
}

func TestDecodeStrictNamesTheField(t *testing.T) {
	cases := map[string]string{
		`{"text":"a","colour":1}`:  "unknown field colour",
		`{"n":"seven"}`:            "field n: expected a whole number, got string",
		`{"inner":{"k":"v"}}`:      "field inner: expected a whole number",
		`{"text":"a"} x`:           "data after its JSON value",
		`{"text":"a"}{"text":"b"}`: "more than one JSON value",
		``:                         "empty",
		`{"text":`:                 "ends too soon",
	}
	for body, want := range cases {
		var got strictTarget
		err := toolkit.DecodeStrict(strings.NewReader(body), &got)
		require.True(t, errs.Is(err, errs.BadInput), "%q: %v", body, err)
		assert.Contains(t, err.Error(), want, "%q", body)
	}
}

func TestDecodeStrictRefusesANameGivenTwice(t *testing.T) {
	cases := map[string]string{
		`{"text":"a","text":"b"}`:                     "field text is given twice",
		`{"inner":{"k":1,"k":2}}`:                     "field inner.k is given twice",
		`{"inner":{"k":1},"n":1,"inner":{"j":2}}`:     "field inner is given twice",
		`{"text":"a","list":[{"x":1},{"x":1,"x":2}]}`: "field list[1].x is given twice",
	}
	for body, want := range cases {
		var got map[string]any
		err := toolkit.DecodeStrict(strings.NewReader(body), &got)
		require.True(t, errs.Is(err, errs.BadInput), "%q: %v", body, err)
		assert.Contains(t, err.Error(), want, "%q", body)
	}
	// The same name in two objects, or twice as a value, is fine.
	var got map[string]any
	require.NoError(t, toolkit.DecodeStrict(strings.NewReader(`{"a":{"k":1},"b":{"k":1},"c":["k","k"],"d":[[1],[1]]}`), &got))
}

func TestDecodeStrictRefusesControlCharacters(t *testing.T) {
	cases := map[string]string{
		`{"text":"a\u0000b"}`:          "field text holds a control character (U+0000)",
		`{"inner":{"k":"\u001b[31m"}}`: "field inner.k holds a control character (U+001B)",
		`{"list":["ok","\u0007"]}`:     "field list[1] holds a control character (U+0007)",
		`{"inner":{"a\u0001b":1}}`:     "a name in field inner holds a control character (U+0001)",
		`"\u0000"`:                     "the body holds a control character",
	}
	for body, want := range cases {
		var got any
		err := toolkit.DecodeStrict(strings.NewReader(body), &got)
		require.True(t, errs.Is(err, errs.BadInput), "%q: %v", body, err)
		assert.Contains(t, err.Error(), want, "%q", body)
	}
	var got strictTarget
	require.NoError(t, toolkit.DecodeStrict(strings.NewReader(`{"text":"tab\tand\nlines\r\n"}`), &got), "tab and line breaks are text")
	assert.Equal(t, "tab\tand\nlines\r\n", got.Text)
}

func TestCheckJSONTextReadsNamesAsJSONDoes(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{`)
	for i := range 40 {
		fmt.Fprintf(&many, `"k%d":%d,`, i, i)
	}
	many.WriteString(`"k7":0}`)
	cases := map[string]string{
		`{"a":1,"\u0061":2}`:            "field a is given twice",
		many.String():                   "field k7 is given twice",
		`{"x":"\b"}`:                    "field x holds a control character (U+0008)",
		`{"x":["ok",{"y":"a\fb"}]}`:     "field x[1].y holds a control character (U+000C)",
		`[{"a":1},{"b":{"c":1,"c":2}}]`: "field [1].b.c is given twice",
	}
	for body, want := range cases {
		err := toolkit.CheckJSONText([]byte(body))
		require.Error(t, err, body)
		assert.Contains(t, err.Error(), want, body)
	}
	// What isn't JSON is the decoder's to name; deep nesting too.
	for _, body := range []string{`{"a":`, `{"a" 1}`, `[1,,2]`, "{\"a\":\"raw\x01\"}", strings.Repeat("[", 20000)} {
		assert.NoError(t, toolkit.CheckJSONText([]byte(body)), body)
	}
	assert.NoError(t, toolkit.CheckJSONText([]byte(`{"a":{"k":1},"b":{"k":1},"t":"tab\tand\n","n":-1.5e3,"l":[true,false,null]}`)))
}
