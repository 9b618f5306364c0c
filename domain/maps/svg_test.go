package maps

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"net/url"
	"strings"
	"testing"
)

const aLogo = `<?xml version="1.0" encoding="UTF-8"?>
<!-- a token's logo -->
<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32"><style>circle{fill:#00c08b}</style><circle cx="16" cy="16" r="16"/><path d="M8 8h16v16z" fill="#fff"/></svg>
`

func TestAnSVGIconIsKeptAsGiven(t *testing.T) {
	for name, icon := range map[string]string{
		"base64":          "data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(aLogo)),
		"percent-encoded": "data:image/svg+xml," + url.PathEscape(aLogo),
		"utf8, charset":   "data:image/svg+xml;charset=utf-8," + url.PathEscape(aLogo),
	} {
		p, err := CheckIcon(icon)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if p.MediaType != "image/svg+xml" || string(p.Bytes) != aLogo || p.Width != 32 || p.Height != 32 || len(p.SHA256) != 64 {
			t.Fatalf("%s: %+v", name, p)
		}
	}
	// Its size: width and height, else its viewBox, else a browser's default.
	for svg, want := range map[string][2]int{
		`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 48.4"/>`:   {64, 48},
		`<svg xmlns="http://www.w3.org/2000/svg" width="100%"/>`:            {300, 150},
		`<svg xmlns="http://www.w3.org/2000/svg" width="9000" height="2"/>`: {4096, 2},
	} {
		p, err := CheckSVG([]byte(svg))
		if err != nil || p.Width != want[0] || p.Height != want[1] {
			t.Errorf("%s: %dx%d, %v", svg, p.Width, p.Height, err)
		}
	}
	// A script inside is kept: it never runs where the site shows it (an
	// <img>, and the media route's sandbox CSP).
	if _, err := CheckSVG([]byte(`<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>`)); err != nil {
		t.Fatal(err)
	}
}

func TestAnSVGIconIsRefused(t *testing.T) {
	deep := strings.Repeat("<g>", MaxSVGDepth) + strings.Repeat("</g>", MaxSVGDepth)
	for name, svg := range map[string]string{
		"a DOCTYPE":             `<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd"><svg xmlns="http://www.w3.org/2000/svg"/>`,
		"an entity":             `<!DOCTYPE svg [<!ENTITY a "aaaaaaaaaa">]><svg xmlns="http://www.w3.org/2000/svg"><text>&a;</text></svg>`,
		"an undeclared entity":  `<svg xmlns="http://www.w3.org/2000/svg"><text>&a;</text></svg>`,
		"an html root":          `<html xmlns="http://www.w3.org/1999/xhtml"><body><script>alert(1)</script></body></html>`,
		"svg outside its space": `<svg><circle r="1"/></svg>`,
		"malformed":             `<svg xmlns="http://www.w3.org/2000/svg"><g></svg>`,
		"unclosed":              `<svg xmlns="http://www.w3.org/2000/svg">`,
		"two roots":             `<svg xmlns="http://www.w3.org/2000/svg"/><svg xmlns="http://www.w3.org/2000/svg"/>`,
		"text after the root":   `<svg xmlns="http://www.w3.org/2000/svg"/>trailing`,
		"a stylesheet":          `<?xml-stylesheet href="https://example.com/a.css"?><svg xmlns="http://www.w3.org/2000/svg"/>`,
		"another charset":       `<?xml version="1.0" encoding="ISO-8859-1"?><svg xmlns="http://www.w3.org/2000/svg"/>`,
		"too deep":              `<svg xmlns="http://www.w3.org/2000/svg">` + deep + `</svg>`,
		"too many elements":     `<svg xmlns="http://www.w3.org/2000/svg">` + strings.Repeat("<g/>", MaxSVGElements) + `</svg>`,
		"over 64 KiB":           `<svg xmlns="http://www.w3.org/2000/svg"><!--` + strings.Repeat("x", MaxLogoBytes) + `--></svg>`,
		"empty":                 ``,
		"not UTF-8":             "<svg xmlns=\"http://www.w3.org/2000/svg\"><text>\xff</text></svg>",
	} {
		if _, err := CheckSVG([]byte(svg)); err == nil {
			t.Errorf("%s: kept", name)
		}
		if _, err := CheckIcon("data:image/svg+xml;base64," + base64.StdEncoding.EncodeToString([]byte(svg))); err == nil {
			t.Errorf("%s: kept as an icon", name)
		}
	}
	for name, icon := range map[string]string{
		"over 64 KiB percent-encoded": "data:image/svg+xml," + strings.Repeat("%20", MaxLogoBytes+1),
		"bad percent-encoding":        "data:image/svg+xml,%3Csvg%zz",
		"another charset":             "data:image/svg+xml;charset=utf-16," + url.PathEscape(aLogo),
		"bad base64":                  "data:image/svg+xml;base64,<svg",
	} {
		if _, err := CheckIcon(icon); err == nil {
			t.Errorf("%s: kept", name)
		}
	}
}

// BenchmarkCheckSVG checks a logo at the limits (64 KiB, 4,000 elements)
// beside its floor: encoding/xml reading the same bytes to their end.
//
//	go test ./domain/maps -run '^$' -bench CheckSVG -benchtime 200x
func BenchmarkCheckSVG(b *testing.B) {
	var s strings.Builder
	s.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 64">`)
	for s.Len() < MaxLogoBytes-64 {
		s.WriteString(`<path d="M1 2h3"/>`)
	}
	s.WriteString(`</svg>`)
	data := []byte(s.String())
	if _, err := CheckSVG(data); err != nil {
		b.Fatal(err)
	}
	b.Run("check", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := CheckSVG(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("floor-xml-tokens", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			d := xml.NewDecoder(bytes.NewReader(data))
			for {
				if _, err := d.Token(); err != nil {
					break
				}
			}
		}
	})
}
