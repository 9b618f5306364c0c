package eyesapp

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// read_page's pages and what it keeps.
const (
	// PageChars is about how many characters one page of read_page holds.
	PageChars = 20_000
	// pageJSONBytes bounds a page's text once JSON-encoded, so a page of
	// quotes, markup or another script fits the agent's thread (24 KiB a
	// tool result) with room for the rest of the answer.
	pageJSONBytes = 20_000
	// pageBreakWindow is how far back a page looks for a line or word break
	// to end on.
	pageBreakWindow = 800
	// pageKeep is how long a read page's text answers its later pages
	// without reading it again.
	pageKeep        = 5 * time.Minute
	pageCacheBytes  = 32 << 20
	pageCacheItem   = 8 << 20
	pageReadsAtOnce = 4 // pages read and converted at once in one process
)

// PageAnswer is what read_page answers.
type PageAnswer struct {
	URL         string `json:"url"` // where the page was read, after redirects
	Title       string `json:"title"`
	ContentType string `json:"content_type"`
	Start       int    `json:"start"`
	End         int    `json:"end"`
	Total       int    `json:"total"` // characters in the page's text
	Next        *int   `json:"next"`  // the next page's start; null at the end
	Cut         bool   `json:"cut"`   // the page was longer than 5 MiB and its text stops there
	Text        string `json:"text"`
}

type cachedPage struct {
	page  ports.WebPage
	chars int
	at    time.Time
}

func (s *EyesService) readPage(ctx context.Context, _ toolkit.Call, in readPageInput) (PageAnswer, error) {
	raw := strings.TrimSpace(in.URL)
	p, err := s.page(ctx, raw)
	if err != nil {
		return PageAnswer{}, err
	}
	if in.Start > p.chars {
		return PageAnswer{}, errs.Newf(errs.BadInput, "start: %d is past the end of the page's text (%d characters)", in.Start, p.chars).
			WithHint("start at 0, or at the next a page gave")
	}
	text, end := PageOf(p.page.Text, in.Start)
	out := PageAnswer{URL: p.page.URL, Title: p.page.Title, ContentType: p.page.ContentType, Start: in.Start, End: end,
		Total: p.chars, Cut: p.page.Cut, Text: text}
	if end < p.chars {
		out.Next = &end
	}
	return out, nil
}

// page is the page at raw, from what was read in the last few minutes or
// read now (a few at a time per process: each may hold megabytes).
func (s *EyesService) page(ctx context.Context, raw string) (cachedPage, error) {
	if c, ok := s.pageCache.Get(raw); ok {
		if s.clock.Now().Sub(c.at) < pageKeep {
			return c, nil
		}
		s.pageCache.Remove(raw)
	}
	select {
	case s.pageSlots <- struct{}{}:
		defer func() { <-s.pageSlots }()
	case <-ctx.Done():
		return cachedPage{}, errs.New(errs.SourceFailed, "too many pages are being read at once", "try again in a moment").WithCause(ctx.Err())
	}
	page, err := s.pages.Fetch(ctx, raw)
	if err != nil {
		return cachedPage{}, err
	}
	c := cachedPage{page: page, chars: utf8.RuneCountInString(page.Text), at: s.clock.Now()}
	s.pageCache.Put(raw, c)
	return c, nil
}

// PageOf is the page of text that begins at character start: about
// PageChars characters and at most pageJSONBytes once JSON-encoded, ending at
// a line break (else a space) near its end when there is one. It answers the
// page and the character where it ended.
func PageOf(text string, start int) (string, int) {
	i, pos := 0, 0 // byte offset, character offset
	for pos < start && i < len(text) {
		_, n := utf8.DecodeRuneInString(text[i:])
		i += n
		pos++
	}
	from, chars, cost := i, 0, 0
	lastLine, lastSpace := -1, -1 // byte offsets after a break, with their character counts
	lineChars, spaceChars := 0, 0
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		c := jsonCost(r, n)
		if chars >= PageChars || cost+c > pageJSONBytes {
			break
		}
		i += n
		chars++
		cost += c
		switch r {
		case '\n':
			lastLine, lineChars = i, chars
		case ' ', '\t':
			lastSpace, spaceChars = i, chars
		}
	}
	if i < len(text) {
		switch {
		case lastLine > from && chars-lineChars <= pageBreakWindow:
			i, chars = lastLine, lineChars
		case lastSpace > from && chars-spaceChars <= pageBreakWindow:
			i, chars = lastSpace, spaceChars
		}
	}
	return text[from:i], start + chars
}

// jsonCost is how many bytes encoding/json writes for rune r (n bytes long).
func jsonCost(r rune, n int) int {
	switch {
	case r == '"' || r == '\\' || r == '\n' || r == '\r' || r == '\t':
		return 2
	case r < 0x20, r == '<', r == '>', r == '&', r == 0x2028, r == 0x2029, r == utf8.RuneError:
		return 6
	}
	return n
}
