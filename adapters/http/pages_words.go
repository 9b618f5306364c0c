package httpapi

import (
	"html/template"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Words for people on the pages: dates as a person writes them (the exact
// instant on hover), shares as percentages, ranks as ordinals.

// pageTime is an instant as a page shows it: <time datetime=ISO
// title=Exact>Human</time>.
type pageTime struct {
	ISO, Human, Exact string
}

// when reads an RFC 3339 instant; anything else shows as it came.
func when(at string) pageTime {
	t, err := time.Parse(time.RFC3339Nano, at)
	if err != nil {
		return pageTime{ISO: at, Human: at, Exact: at}
	}
	t = t.UTC()
	return pageTime{ISO: t.Format(time.RFC3339), Human: t.Format("2 Jan 2006"), Exact: t.Format("Monday 2 January 2006, 15:04:05 UTC")}
}

// ordinal writes 1 as "1st", 2 as "2nd", 11 as "11th".
func ordinal(n int) string {
	s := strconv.Itoa(n)
	if n%100 >= 11 && n%100 <= 13 {
		return s + "th"
	}
	switch n % 10 {
	case 1:
		return s + "st"
	case 2:
		return s + "nd"
	case 3:
		return s + "rd"
	}
	return s + "th"
}

// shareText writes a decimal fraction ("0.166666666667") as a percentage
// with one decimal ("16.7%"), exactly; anything else shows as it came.
func shareText(fraction string) string {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(fraction))
	if !ok {
		return fraction
	}
	s := r.Mul(r, big.NewRat(100, 1)).FloatString(1)
	s = strings.TrimSuffix(s, ".0")
	if s == "0" && r.Sign() > 0 {
		return "<0.1%"
	}
	return s + "%"
}

// sitePath is a path of this site in a message ("see /connect").
var sitePath = regexp.MustCompile(`(^|[\s(“"'])(/[a-z][a-z0-9._/-]*[a-z0-9])`)

// linked writes a message as HTML, every site path in it a link and the rest
// escaped text.
func linked(text string) template.HTML {
	var b strings.Builder
	last := 0
	for _, m := range sitePath.FindAllStringSubmatchIndex(text, -1) {
		b.WriteString(template.HTMLEscapeString(text[last:m[4]]))
		p := text[m[4]:m[5]]
		b.WriteString(`<a href="` + template.HTMLEscapeString(p) + `">` + template.HTMLEscapeString(p) + `</a>`)
		last = m[5]
	}
	b.WriteString(template.HTMLEscapeString(text[last:]))
	return template.HTML(b.String()) //nolint:gosec // every part above is escaped
}
