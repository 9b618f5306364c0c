package specs

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/snapshots"
)

// The drawing's fixed geometry, in SVG user units. Fixed numbers (not the
// data) decide the canvas, so every flower has the same frame.
const (
	canvasW     = 1280
	canvasH     = 1040
	centreX     = 500
	centreY     = 560
	discR       = 16.0  // the flower's centre disc
	petalMaxLen = 290.0 // the largest petal, from the disc's edge to its tip
	labelGap    = 6.0
	labelFont   = 11.0
	labelChars  = 22 // a name longer than this is cut, with "…"
	legendX     = 1010
	legendY     = 110
	legendRow   = 24
	legendChars = 30
	// maxHalfAngle caps a petal's half-width for flowers of a few petals, so
	// one or two petals still look like petals.
	maxHalfAngle = math.Pi / 3
	// tinyPetal is the drawn length (in units) under which a petal also gets
	// a marker dot.
	tinyPetal = 4.0
	// petalFill is the part of its wedge a petal fills, leaving a gap between
	// neighbours.
	petalFill = 0.94
)

// RenderVersion names how Render draws: picture addresses carry it (the
// map's ?look=), so a cached picture is never an old look. Change it with
// any change that changes a golden file's bytes.
const RenderVersion = "1"

// LegendEntry is one colour of a flower: what it means and its swatch.
type LegendEntry struct {
	Label  string `json:"label"`
	Swatch string `json:"swatch"`
}

// Rendering is a drawn flower: the SVG's bytes, their SHA-256 and the legend.
type Rendering struct {
	SVG    []byte
	SHA256 string
	Legend []LegendEntry
}

// LegendOf gives a flower's keys their swatches under a view's palette: the
// legend Render would answer, without drawing.
func LegendOf(keys []Key, v View) []LegendEntry {
	pal, ok := palettes[v.Palette]
	if !ok {
		pal = palettes[PaletteOkabeIto]
	}
	legend := make([]LegendEntry, len(keys))
	for i, k := range keys {
		legend[i] = LegendEntry{Label: k.Label, Swatch: swatch(pal, k)}
	}
	return legend
}

// Render draws a laid-out flower through a view. The same flower and view give
// the same bytes: no map is iterated, and every number is written with a fixed
// format (two decimals at most).
func Render(f *Flower, v View) Rendering {
	pal, ok := palettes[v.Palette]
	if !ok {
		pal = palettes[PaletteOkabeIto]
	}
	legend := LegendOf(f.Keys, v)
	desc := Interpret(f)

	var b bytes.Buffer
	b.Grow(2048 + 700*len(f.Petals))
	w := func(parts ...string) {
		for _, p := range parts {
			b.WriteString(p)
		}
	}
	w(`<svg xmlns="http://www.w3.org/2000/svg" width="`, itoa(canvasW), `" height="`, itoa(canvasH),
		`" viewBox="0 0 `, itoa(canvasW), " ", itoa(canvasH), `" role="img" aria-labelledby="flower-title flower-desc" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif">`, "\n")
	w(`<title id="flower-title">`, esc(f.Spec.Title), "</title>\n")
	w(`<desc id="flower-desc">`, esc(desc), "</desc>\n")
	w(`<rect width="`, itoa(canvasW), `" height="`, itoa(canvasH), `" fill="#FFFFFF"/>`, "\n")
	w(`<text x="24" y="42" font-size="22" font-weight="600" fill="#1A1A1A">`, esc(cut(f.Spec.Title, 80)), "</text>\n")
	w(`<text x="24" y="66" font-size="13" fill="#555555">`, esc(subtitle(f)), "</text>\n")

	n := len(f.Petals)
	if n == 0 {
		w(`<circle cx="`, itoa(centreX), `" cy="`, itoa(centreY), `" r="`, num(discR), `" fill="#3A3A3A"/>`, "\n")
		w(`<text x="`, itoa(centreX), `" y="`, itoa(centreY+44), `" font-size="14" text-anchor="middle" fill="#555555">Nothing to draw: no selected account holds any weight.</text>`, "\n")
	} else {
		drawPetals(&b, f, v, pal)
	}
	if f.Spec.Legend && len(legend) > 0 {
		drawLegend(&b, f, legend)
	}
	b.WriteString("</svg>\n")

	sum := sha256.Sum256(b.Bytes())
	return Rendering{SVG: b.Bytes(), SHA256: hex.EncodeToString(sum[:]), Legend: legend}
}

func drawPetals(b *bytes.Buffer, f *Flower, v View, pal palette) {
	n := len(f.Petals)
	wedge := 2 * math.Pi / float64(n)
	half := math.Min(petalFill*wedge/2, maxHalfAngle)
	// Labels sit at least far enough out that neighbours' text (about one
	// font height across) does not touch.
	minLabelR := math.Min(discR+petalMaxLen+labelGap, (labelFont+2)/wedge)

	showLabels := f.Spec.Labels == LabelsName && v.Labels == ViewLabelsSpec
	labelled := make([]bool, n)
	if showLabels {
		limit := v.MaxLabels
		if limit <= 0 || limit > n {
			limit = n
		}
		// The largest petals keep their labels first.
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		sortByWeight(order, f.Petals)
		for _, i := range order[:limit] {
			labelled[i] = true
		}
	}

	b.WriteString(`<g transform="translate(` + itoa(centreX) + " " + itoa(centreY) + `)">` + "\n")
	b.WriteString(`<g stroke="#FFFFFF" stroke-width="0.75" stroke-linejoin="round">` + "\n")
	for i, p := range f.Petals {
		phi := -math.Pi/2 + float64(i)*wedge // clockwise from twelve o'clock
		// Every petal is the same shape scaled by its length, so its area goes
		// with length²: length = max × √(relative area) keeps area ∝ size.
		length := petalMaxLen * math.Sqrt(p.Size)
		b.WriteString(`<path d="`)
		b.WriteString(petalPath(phi, half, length))
		b.WriteString(`" fill="`)
		b.WriteString(swatch(pal, f.Keys[p.Key]))
		b.WriteString(`"><title>`)
		b.WriteString(esc(p.Name + ": " + petalPercent(p) + " of the total"))
		b.WriteString("</title></path>\n")
	}
	b.WriteString("</g>\n")
	b.WriteString(`<circle r="` + num(discR) + `" fill="#3A3A3A"/>` + "\n")
	// A petal too small to see at scale (a whale among dust) gets a dot at the
	// disc's edge, so its label never points at nothing. The dot is a marker,
	// not an area.
	for i, p := range f.Petals {
		if petalMaxLen*math.Sqrt(p.Size) >= tinyPetal {
			continue
		}
		x, y := polar(discR+3.5, -math.Pi/2+float64(i)*wedge)
		b.WriteString(`<circle cx="` + num(x) + `" cy="` + num(y) + `" r="1.6" fill="` + swatch(pal, f.Keys[p.Key]) + `" stroke="#3A3A3A" stroke-width="0.5"/>` + "\n")
	}

	if showLabels {
		b.WriteString(`<g font-size="` + num(labelFont) + `" fill="#1A1A1A">` + "\n")
		for i, p := range f.Petals {
			if !labelled[i] {
				continue
			}
			phi := -math.Pi/2 + float64(i)*wedge
			tip := discR + petalMaxLen*math.Sqrt(p.Size)
			r := math.Max(tip+labelGap, minLabelR)
			if r-tip > 2*labelGap {
				// A faint leader from the tip out to a label pushed outwards.
				x1, y1 := polar(tip+2, phi)
				x2, y2 := polar(r-2, phi)
				b.WriteString(`<line x1="` + num(x1) + `" y1="` + num(y1) + `" x2="` + num(x2) + `" y2="` + num(y2) + `" stroke="#B0B0B0" stroke-width="0.5"/>` + "\n")
			}
			deg := phi * 180 / math.Pi
			text := cut(p.Name, labelChars) + " " + petalPercent(p)
			// Text on the left half is turned over so it never reads upside down.
			if math.Cos(phi) >= -1e-9 {
				b.WriteString(`<text transform="rotate(` + num(deg) + `)" x="` + num(r) + `" dy="0.35em">` + esc(text) + "</text>\n")
			} else {
				b.WriteString(`<text transform="rotate(` + num(deg-180) + `)" x="` + num(-r) + `" dy="0.35em" text-anchor="end">` + esc(text) + "</text>\n")
			}
		}
		b.WriteString("</g>\n")
	}
	b.WriteString("</g>\n")
}

// petalPath is one petal pointing along angle phi, its base on the centre
// disc's edge: straight-ish sides opening at ±half, a rounded tip at length.
// Every control point lies inside the petal's own wedge, so neighbours never
// overlap.
func petalPath(phi, half, length float64) string {
	ux, uy := math.Cos(phi), math.Sin(phi)
	vx, vy := -uy, ux
	ax, ay := discR*ux, discR*uy
	pt := func(x, y float64) string { // local (along, across) → absolute
		return num(ax+x*ux+y*vx) + " " + num(ay+x*uy+y*vy)
	}
	side := 0.6 * length
	sx, sy := side*math.Cos(half), side*math.Sin(half)
	shoulder := 0.6 * length * math.Sin(half)
	var s strings.Builder
	s.WriteString("M" + pt(0, 0))
	s.WriteString("C" + pt(sx, sy) + " " + pt(length, shoulder) + " " + pt(length, 0))
	s.WriteString("C" + pt(length, -shoulder) + " " + pt(sx, -sy) + " " + pt(0, 0) + "Z")
	return s.String()
}

func drawLegend(b *bytes.Buffer, f *Flower, legend []LegendEntry) {
	b.WriteString(`<g font-size="13" fill="#1A1A1A">` + "\n")
	heading := map[string]string{ColourGroup: "Colour: group", ColourBand: "Colour: share of the total"}[f.Spec.Colour]
	b.WriteString(`<text x="` + itoa(legendX) + `" y="` + itoa(legendY) + `" font-weight="600">` + esc(heading) + "</text>\n")
	y := legendY + 14
	for _, e := range legend {
		b.WriteString(`<rect x="` + itoa(legendX) + `" y="` + itoa(y) + `" width="14" height="14" rx="3" fill="` + e.Swatch + `" stroke="#6E6E6E" stroke-width="0.5"/>`)
		b.WriteString(`<text x="` + itoa(legendX+22) + `" y="` + itoa(y+11) + `">` + esc(cut(e.Label, legendChars)) + "</text>\n")
		y += legendRow
	}
	area := map[string]string{
		SizeWeight: "Petal area: weight",
		SizeSqrt:   "Petal area: square root of weight",
		SizeEqual:  "Petal area: equal for every petal",
	}[f.Spec.Size]
	b.WriteString(`<text x="` + itoa(legendX) + `" y="` + itoa(y+16) + `" font-size="12" fill="#555555">` + esc(area) + "</text>\n")
	b.WriteString("</g>\n")
}

func subtitle(f *Flower) string {
	own := len(f.Petals)
	if own > 0 && f.Petals[own-1].Others {
		own--
	}
	parts := []string{
		plural(own, "petal") + " of " + plural(f.Count, "account"),
		"snapshot " + short(f.Spec.Snapshot),
		"total weight " + abbreviate(snapshots.FormatScaled(f.Total, f.Scale)),
	}
	return strings.Join(parts, " · ")
}

// Interpret says in one plain sentence or two what the flower shows.
func Interpret(f *Flower) string {
	own := 0
	var largest *Petal
	for i := range f.Petals {
		p := &f.Petals[i]
		if p.Others {
			continue
		}
		own++
		if largest == nil || p.Weight.Cmp(largest.Weight) > 0 {
			largest = p
		}
	}
	if own == 0 && f.Folded == 0 {
		return "Nothing to draw: the selection holds no accounts."
	}
	sizing := map[string]string{SizeWeight: "sized by weight", SizeSqrt: "sized by the square root of weight so small holders stay visible", SizeEqual: "all the same size"}[f.Spec.Size]
	colour := map[string]string{ColourGroup: "coloured by group", ColourBand: "coloured by share of the total"}[f.Spec.Colour]
	of := plural(f.Selected, "account")
	if len(f.Spec.Petals.Groups) > 0 {
		of += " in " + joinQuoted(f.Spec.Petals.Groups)
	}
	var s strings.Builder
	switch {
	case own == 0:
		s.WriteString("None of the " + of + " holds enough to be a petal")
	case f.Folded == 0 && own == 1:
		s.WriteString("The only account is a petal, " + sizing + " and " + colour)
	case f.Folded == 0:
		s.WriteString("All " + of + " are petals, " + sizing + " and " + colour)
	default:
		s.WriteString("The " + groupDigits(own) + " largest of " + of + " are petals, " + sizing + " and " + colour)
	}
	switch {
	case f.Folded > 0 && f.Hidden:
		s.WriteString("; the other " + groupDigits(f.Folded) + ", holding " + Percent(f.FoldedShare) + " of the total, are not drawn.")
	case f.Folded > 0:
		s.WriteString("; the other " + groupDigits(f.Folded) + " fold into one grey petal holding " + Percent(f.FoldedShare) + " of the total.")
	default:
		s.WriteString(".")
	}
	if largest != nil {
		s.WriteString(" The largest, " + cut(largest.Name, 40) + ", holds " + Percent(largest.Share) + " of the total weight")
		if f.Nakamoto != nil {
			if *f.Nakamoto == 1 {
				s.WriteString(", more than half on its own.")
			} else {
				s.WriteString("; " + groupDigits(*f.Nakamoto) + " accounts together hold more than half.")
			}
		} else {
			s.WriteString(".")
		}
	}
	return s.String()
}

func joinQuoted(groups []string) string {
	q := make([]string, len(groups))
	for i, g := range groups {
		q[i] = cut(g, 30)
	}
	return strings.Join(q, ", ")
}

func swatch(p palette, k Key) string {
	switch k.Kind {
	case KeyGroup:
		return p.groups[k.Index%len(p.groups)]
	case KeyBand:
		return bandColours[k.Index]
	case KeyOthers:
		return p.others
	}
	return p.ungrouped
}

func sortByWeight(order []int, petals []Petal) {
	slices.SortStableFunc(order, func(a, b int) int {
		if c := petals[b].Weight.Cmp(petals[a].Weight); c != 0 {
			return c
		}
		return a - b
	})
}

// petalPercent is a petal's share, never "0%" for a petal that holds something.
func petalPercent(p Petal) string {
	s := Percent(p.Share)
	if s == "0%" && p.Weight.Sign() > 0 {
		return "<0.1%"
	}
	return s
}

func polar(r, phi float64) (float64, float64) { return r * math.Cos(phi), r * math.Sin(phi) }

// num writes a coordinate with at most two decimals, never "-0".
func num(x float64) string {
	s := strconv.FormatFloat(x, 'f', 2, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}

func itoa(n int) string { return strconv.Itoa(n) }

// cut shortens s to n columns, ending with "…" when it was longer. A wide
// character (CJK, Hangul, fullwidth forms, most emoji) takes two columns, so
// a cut label takes about the same room in any script.
func cut(s string, n int) string {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	if w <= n {
		return s
	}
	var b strings.Builder
	w = 0
	for _, r := range s {
		rw := runeWidth(r)
		if w+rw > n-1 {
			break
		}
		b.WriteRune(r)
		w += rw
	}
	return strings.TrimRight(b.String(), " ") + "…"
}

// runeWidth is 2 for East Asian wide and fullwidth characters and emoji, 1
// for the rest: enough to keep labels inside the canvas.
func runeWidth(r rune) int {
	switch {
	case r >= 0x1100 && r <= 0x115F, r >= 0x2E80 && r <= 0xA4CF, r >= 0xAC00 && r <= 0xD7A3,
		r >= 0xF900 && r <= 0xFAFF, r >= 0xFE30 && r <= 0xFE4F, r >= 0xFF00 && r <= 0xFF60,
		r >= 0xFFE0 && r <= 0xFFE6, r >= 0x1F300 && r <= 0x1FAFF, r >= 0x20000 && r <= 0x3FFFD:
		return 2
	}
	return 1
}

// abbreviate shortens a long decimal: 1234567890.5 → "1,234,567,890.5";
// past fifteen digits, "1.23e+24".
func abbreviate(dec string) string {
	whole, frac, _ := strings.Cut(dec, ".")
	if len(whole) > 15 {
		f, err := strconv.ParseFloat(whole, 64)
		if err == nil {
			return strconv.FormatFloat(f, 'e', 2, 64)
		}
	}
	for i := len(whole) - 3; i > 0; i -= 3 {
		whole = whole[:i] + "," + whole[i:]
	}
	if frac != "" {
		if len(frac) > 4 {
			frac = frac[:4]
		}
		return whole + "." + frac
	}
	return whole
}

// esc makes untrusted text safe as XML character data or an attribute value:
// the five special characters become entities, and characters XML 1.0 cannot
// hold (control characters, lone surrogates, U+FFFE/FFFF) become U+FFFD.
func esc(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r == '&':
			b.WriteString("&amp;")
		case r == '<':
			b.WriteString("&lt;")
		case r == '>':
			b.WriteString("&gt;")
		case r == '"':
			b.WriteString("&quot;")
		case r == '\'':
			b.WriteString("&#39;")
		case r == utf8.RuneError && size == 1, !xmlChar(r):
			b.WriteRune('\uFFFD')
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// xmlChar is XML 1.0's Char production.
func xmlChar(r rune) bool {
	return r == 0x9 || r == 0xA || r == 0xD ||
		(r >= 0x20 && r <= 0xD7FF) || (r >= 0xE000 && r <= 0xFFFD) || (r >= 0x10000 && r <= 0x10FFFF)
}
