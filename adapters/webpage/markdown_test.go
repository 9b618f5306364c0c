package webpage

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	htmltomarkdown "github.com/JohannesKaufmann/html-to-markdown/v2/converter"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"golang.org/x/net/html"
)

// hostilePage is the issue's: 80 nested lists around a <pre> of 220,000
// short lines, 440 KB, inside every cap on bytes and elements.
func hostilePage() string {
	var b strings.Builder
	b.WriteString("<title>lists</title>")
	for range 80 {
		b.WriteString("<ul><li>")
	}
	b.WriteString("<pre>")
	for range 220_000 {
		b.WriteString("x\n")
	}
	b.WriteString("</pre>")
	for range 80 {
		b.WriteString("</li></ul>")
	}
	return b.String()
}

// The hostile page is read within its deadline, into bounded text, cut and
// saying so (it took 55-70 s and became 35 million characters).
func TestAPageOfDeepListsIsReadBoundedAndByItsDeadline(t *testing.T) {
	page := hostilePage()
	require.Less(t, len(page), 450_000)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(page))
	}))
	defer srv.Close()
	f := New(Options{AllowLoopback: true, Timeout: 5 * time.Second})
	started := time.Now()
	got, err := f.Fetch(t.Context(), srv.URL+"/lists")
	took := time.Since(started)
	t.Logf("read in %s: %d characters, cut %v", took, len(got.Text), got.Cut)
	if err != nil {
		// A machine slow enough to need the whole deadline must still answer by it.
		require.ErrorContains(t, err, "within 5s")
	} else {
		assert.True(t, got.Cut, "the text past the bound is cut, and the page says so")
		assert.LessOrEqual(t, len(got.Text), MaxTextBytes)
		assert.Contains(t, got.Text, "x\n")
	}
	// Generous past the deadline: a loaded CI machine under -race is slow, and
	// the bug this guards took 55-70 s.
	assert.Less(t, took, 5*time.Second+10*time.Second, "answered by the read's deadline")
}

// Lists past MaxNesting are drawn as plain blocks, their text kept; the ones
// above keep their markers.
func TestDeepListsAreFlattenedPastMaxNesting(t *testing.T) {
	var b strings.Builder
	for i := range 12 {
		b.WriteString("<ul><li>level" + string(rune('a'+i)))
	}
	for range 12 {
		b.WriteString("</li></ul>")
	}
	doc, err := html.Parse(strings.NewReader(b.String()))
	require.NoError(t, err)
	assert.False(t, boundTree(doc, MaxTextBytes))
	f := New(Options{})
	md, err := f.converter.ConvertNode(doc)
	require.NoError(t, err)
	text := string(md)
	assert.Contains(t, text, "- levela")
	assert.Contains(t, text, "- levelh", "the 8th level is still a list")
	assert.NotContains(t, text, "- leveli", "the 9th is a block")
	assert.Contains(t, text, "levell", "its text is kept")
}

// Once the read's context is done the conversion draws nothing more: the
// deadline holds even for what the bounds let through.
func TestTheConversionStopsWhenItsContextIsDone(t *testing.T) {
	doc, err := html.Parse(strings.NewReader("<h1>Title</h1><p>text</p><ul><li>one</li></ul>"))
	require.NoError(t, err)
	f := New(Options{})
	md, err := f.converter.ConvertNode(doc, htmltomarkdown.WithContext(t.Context()))
	require.NoError(t, err)
	assert.Contains(t, string(md), "# Title")
	done, cancel := context.WithCancel(t.Context())
	cancel()
	md, err = f.converter.ConvertNode(doc, htmltomarkdown.WithContext(done))
	require.NoError(t, err)
	assert.Empty(t, strings.TrimSpace(string(md)))
}
