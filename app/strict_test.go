package app_test

import (
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/app"
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
			require.NoError(t, app.DecodeStrict(split(strings.NewReader(`{"text":"`+text+`","n":1}`)), &got), "%s %q", name, text)
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
			err := app.DecodeStrict(split(strings.NewReader(tc.body)), &got)
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
		err := app.DecodeStrict(split(strings.NewReader("{\"text\":\"ok\"}\xf0\x9f")), &got)
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
		err := app.DecodeStrict(strings.NewReader(body), &got)
		require.True(t, errs.Is(err, errs.BadInput), "%q: %v", body, err)
		assert.Contains(t, err.Error(), want, "%q", body)
	}
}
