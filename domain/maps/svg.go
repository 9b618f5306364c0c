package maps

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/petal-near/petal/domain/profiles"
)

// Most NEAR tokens' icons are SVG documents. One is kept as a logo only when
// it is one well-formed XML document whose root is an SVG <svg>, with no
// DOCTYPE or entity declarations and within bounds; it is kept as given (its
// script, if any, never runs: an <img> shows an SVG in secure static mode,
// and the media route serves it under a sandbox CSP that runs nothing and
// loads nothing, docs/map.md).
const (
	svgNamespace = "http://www.w3.org/2000/svg"
	// MaxSVGDepth and MaxSVGElements bound the document read: a logo
	// needs far fewer.
	MaxSVGDepth    = 32
	MaxSVGElements = 4096
	// An SVG that gives no size is drawn at a replaced element's default,
	// 300 x 150 CSS pixels.
	svgDefaultWidth, svgDefaultHeight = 300, 150
)

// decodeSVGDataURL reads data:image/svg+xml[;charset=utf-8][;base64],…: base64
// or percent-encoded (as most NEAR icons are), its payload bounded before
// anything is decoded.
func decodeSVGDataURL(head, payload string) ([]byte, error) {
	params := strings.Split(strings.ToLower(head), ";")[1:]
	base64ed := false
	for _, p := range params {
		switch strings.TrimSpace(p) {
		case "base64":
			base64ed = true
		case "charset=utf-8", "charset=utf8", "utf8", "utf-8", "":
		default:
			return nil, refuseMark("the SVG icon's data: URL says %q: only UTF-8 is read", cutTo(p, 40))
		}
	}
	if base64ed {
		return decodeIconBase64(payload)
	}
	// Percent-encoding takes at most three characters a byte.
	if len(payload) > 3*MaxLogoBytes {
		return nil, refuseMark("the icon is over %d KiB (%d characters)", MaxLogoBytes>>10, len(payload))
	}
	data, err := url.PathUnescape(payload)
	if err != nil {
		return nil, refuseMark("the SVG icon's data: URL is not percent-encoded text: %v", err)
	}
	return []byte(data), nil
}

func cutTo(s string, n int) string {
	if len(s) > n {
		return s[:n]
	}
	return s
}

// CheckSVG proves data is an SVG logo this site keeps, or says why not: at
// most MaxLogoBytes of UTF-8, read by encoding/xml as a stream (strict, no
// entities but XML's own) to its end: one root element, <svg> in the SVG
// namespace; no DOCTYPE, ENTITY or other declaration; no processing
// instruction but the XML declaration (an xml-stylesheet would load a
// sheet); at most MaxSVGDepth deep and MaxSVGElements elements.
func CheckSVG(data []byte) (LogoPicture, error) {
	if len(data) == 0 {
		return LogoPicture{}, refuseMark("the SVG icon is empty")
	}
	if len(data) > MaxLogoBytes {
		return LogoPicture{}, refuseMark("the icon is over %d KiB (%d bytes)", MaxLogoBytes>>10, len(data))
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true // an unknown entity, a mismatched tag: refused
	var depth, elements int
	var root *xml.StartElement
	ended := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return LogoPicture{}, refuseMark("the SVG icon is not well-formed XML: %v", err)
		}
		switch t := tok.(type) {
		case xml.Directive:
			return LogoPicture{}, refuseMark("the SVG icon holds a declaration (<!%s…>): a DOCTYPE or ENTITY is refused", cutTo(string(t), 20))
		case xml.ProcInst:
			if t.Target != "xml" || root != nil {
				return LogoPicture{}, refuseMark("the SVG icon holds a processing instruction (<?%s…?>)", cutTo(t.Target, 20))
			}
		case xml.StartElement:
			if ended {
				return LogoPicture{}, refuseMark("the SVG icon has more than one root element")
			}
			if root == nil {
				if t.Name.Local != "svg" || t.Name.Space != svgNamespace {
					return LogoPicture{}, refuseMark("the SVG icon's root is <%s> (namespace %q), not an SVG <svg>", cutTo(t.Name.Local, 20), cutTo(t.Name.Space, 60))
				}
				r := t.Copy()
				root = &r
			}
			depth++
			elements++
			if depth > MaxSVGDepth {
				return LogoPicture{}, refuseMark("the SVG icon is nested over %d elements deep", MaxSVGDepth)
			}
			if elements > MaxSVGElements {
				return LogoPicture{}, refuseMark("the SVG icon has over %d elements", MaxSVGElements)
			}
		case xml.EndElement:
			depth--
			if depth == 0 {
				ended = true
			}
		case xml.CharData:
			if root == nil || ended {
				if strings.TrimSpace(strings.TrimPrefix(string(t), "\ufeff")) != "" {
					return LogoPicture{}, refuseMark("the SVG icon has text outside its <svg>")
				}
			}
		}
	}
	if root == nil || !ended {
		return LogoPicture{}, refuseMark("the SVG icon has no <svg> element")
	}
	w, h := svgSize(*root)
	sum := sha256.Sum256(data)
	return LogoPicture{SHA256: hex.EncodeToString(sum[:]), MediaType: profiles.SVG, Bytes: data, Width: w, Height: h}, nil
}

// svgSize is the size the root says it is drawn at (its width and height in
// CSS pixels, else its viewBox's), within 1..profiles.MaxPictureSide; a
// browser's default when it says none.
func svgSize(root xml.StartElement) (int, int) {
	var width, height, viewBox string
	for _, a := range root.Attr {
		switch {
		case a.Name.Space != "":
		case a.Name.Local == "width":
			width = a.Value
		case a.Name.Local == "height":
			height = a.Value
		case a.Name.Local == "viewBox":
			viewBox = a.Value
		}
	}
	w, wok := svgLength(width)
	h, hok := svgLength(height)
	if !wok || !hok {
		if f := strings.FieldsFunc(viewBox, func(r rune) bool { return r == ' ' || r == ',' }); len(f) == 4 {
			w, wok = svgLength(f[2])
			h, hok = svgLength(f[3])
		}
	}
	if !wok || !hok {
		return svgDefaultWidth, svgDefaultHeight
	}
	side := func(v float64) int { return int(min(max(math.Round(v), 1), profiles.MaxPictureSide)) }
	return side(w), side(h)
}

func svgLength(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(s), "px"), 64)
	return v, err == nil && v > 0 && !math.IsInf(v, 0)
}
