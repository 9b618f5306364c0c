package httpapi

import (
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/errs"
)

// However a body's reads split its runes, utf8Reader passes UTF-8 whole and
// stops at the first byte that isn't, naming it.
func TestUTF8ReaderHoweverTheBodyIsSplit(t *testing.T) {
	splits := map[string]func(io.Reader) io.Reader{
		"whole": func(r io.Reader) io.Reader { return r }, "one byte": iotest.OneByteReader,
		"halves": iotest.HalfReader, "data+eof": iotest.DataErrReader,
	}
	for name, split := range splits {
		for _, text := range []string{"plain", "é", "✿ petal", "𝔭𝔢𝔱𝔞𝔩 🌸", strings.Repeat("日本", 300)} {
			got, err := io.ReadAll(&utf8Reader{r: split(strings.NewReader(text))})
			require.NoError(t, err, "%s %q", name, text)
			assert.Equal(t, text, string(got))
		}
		for body, at := range map[string]string{"a\x80": "1", "caf\xe9": "3", "✿\xff": "3", "ok\xf0\x9f": "2"} {
			_, err := io.ReadAll(&utf8Reader{r: split(strings.NewReader(body))})
			e, ok := errs.As(err)
			require.True(t, ok, "%s %q: %v", name, body, err)
			assert.Equal(t, errs.BadInput, e.Code)
			assert.Contains(t, e.Message, "not valid UTF-8", "%s %q", name, body)
			if name == "whole" {
				assert.Contains(t, e.Message, "at byte "+at+")", "%q", body)
			}
		}
	}
}
