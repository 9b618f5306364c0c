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

// The drawing's geometry, in SVG user units. The picture is drawn for the
// box people see it in: 400 units wide, shown 320 to 480 CSS px wide on the
// pages (a 320 px phone, where petal.css lets it reach the screen's edges, to
// a wide screen), so every word (14 units, the title 18) is drawn at 11 px or
// more there (11.2 at 320). Fixed numbers decide the width and the
// flower's frame; the height grows with the rows of the key and the legend, which are bounded.
const (
	canvasW     = 400
	margin      = 16
	discR       = 12.0  // the flower's centre disc
	petalMaxLen = 140.0 // the largest petal, from the disc's edge to its tip
	labelGap    = 6.0
	textFont    = 14 // every word but the title: ≥ 11 px from 315 px wide
	titleFont   = 18.0
	rowH        = 19
	titleChars  = 34 // columns of a title line at titleFont
	lineChars   = 46 // columns of a subtitle line at textFont
	keyChars    = 33 // columns of a petal's name in the key
	legendChars = 21 // columns of a colour's label (two columns of them)
	// keyRows is the most petals the key names; the rest are named by their
	// own titles (the hover, and the text alternative).
	keyRows = 16
	// numberR is how far out a petal's number sits at most: inside the
	// frame, however crowded.
	numberR = discR + petalMaxLen + labelGap + 12
	// tile is the map's card: a square of the flower alone.
	tileW = 400
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
const RenderVersion = "3"

// Form is the box a picture is drawn for.
type Form int

const (
	// FormFull is the picture the API answers and the pages show: the title,
	// the flower with its petals numbered, the key naming them and the legend.
	FormFull Form = iota
	// FormTile is a map card's: the flower alone in a square (the card says
	// its name and what it is).
	FormTile
)

// Look is how one picture is drawn beyond the view: its form and scheme.
type Look struct {
	Form Form
	// Dark draws for a dark page: the page's own dark ground and ink, the
	// view's palette unchanged.
	Dark bool
}

// ink is the colours a scheme draws the frame with.
type ink struct {
	ground, text, muted, disc, edge, leader, swatchEdge string
}

var (
	lightInk = ink{ground: "#FFFFFF", text: "#1A1A1A", muted: "#555555", disc: "#3A3A3A", edge: "#FFFFFF", leader: "#B0B0B0", swatchEdge: "#6E6E6E"}
	// darkInk is the pages' dark card and text (petal.css), so a picture on
	// a dark page is of the page, not a white slab.
	darkInk = ink{ground: "#1E2026", text: "#ECEBE8", muted: "#A9A8A4", disc: "#B8B8B8", edge: "#1E2026", leader: "#5A5C63", swatchEdge: "#8A8A8A"}
)

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

// Render draws a laid-out flower through a view, in its full form and light.
func Render(f *Flower, v View) Rendering { return RenderLook(f, v, Look{}) }

// RenderLook draws a laid-out flower through a view in a look. The same
// flower, view and look give the same bytes: no map is iterated, and every
// number is written with a fixed format (two decimals at most).
//
// Every element the pages restyle carries a class (ground, ink, muted,
// disc, edge, leader, and each text's kind: title, subtitle, number, key,
// legend), and each petal carries its account, name, weight, share and
// colour as data- attributes, for the pages' hover and for a program
// reading the picture.
func RenderLook(f *Flower, v View, look Look) Rendering {
	pal, ok := palettes[v.Palette]
	if !ok {
		pal = palettes[PaletteOkabeIto]
	}
	in := lightInk
	if look.Dark {
		in = darkInk
	}
	legend := LegendOf(f.Keys, v)
	desc := Interpret(f)
	numbered := numberedPetals(f, v)
	if look.Form == FormTile {
		numbered = nil
	}

	var body bytes.Buffer
	body.Grow(2048 + 800*len(f.Petals))
	w := func(parts ...string) {
		for _, p := range parts {
			body.WriteString(p)
		}
	}
	var width, height, cx, cy int
	if look.Form == FormTile {
		width, height = tileW, tileW
		cx, cy = tileW/2, tileW/2
	} else {
		width = canvasW
		y := margin
		lines := wrap(f.Spec.Title, titleChars, 2)
		for _, line := range lines {
			y += int(titleFont) + 4
			w(`<text class="title ink" x="`, itoa(margin), `" y="`, itoa(y), `" font-size="`, num(titleFont), `" font-weight="600" fill="`, in.text, `">`, esc(line), "</text>\n")
		}
		for _, line := range subtitleLines(f) {
			y += rowH
			w(`<text class="subtitle muted" x="`, itoa(margin), `" y="`, itoa(y), `" font-size="`, num(textFont), `" fill="`, in.muted, `">`, esc(line), "</text>\n")
		}
		cx, cy = canvasW/2, y+8+int(math.Ceil(numberR))
		height = cy + int(math.Ceil(numberR)) + 8
	}

	n := len(f.Petals)
	w(`<g transform="translate(`, itoa(cx), " ", itoa(cy), `)">`, "\n")
	if n == 0 {
		w(`<circle class="disc" r="`, num(discR), `" fill="`, in.disc, `"/>`, "\n")
		if look.Form != FormTile {
			w(`<text class="subtitle muted" y="44" font-size="`, num(textFont), `" text-anchor="middle" fill="`, in.muted, `">Nothing to draw: no account holds any weight.</text>`, "\n")
		}
	} else {
		lengthScale := 1.0
		if look.Form == FormTile {
			lengthScale = (tileW/2 - margin/2 - discR) / petalMaxLen
		}
		drawPetals(&body, f, pal, in, numbered, lengthScale)
	}
	body.WriteString("</g>\n")
	if look.Form != FormTile {
		y := height
		if len(numbered) > 0 {
			y = drawKey(&body, f, pal, in, numbered, y)
		}
		if f.Spec.Legend && len(legend) > 0 {
			y = drawLegend(&body, f, legend, in, y+8)
		}
		height = y + margin
	}

	var b bytes.Buffer
	b.Grow(body.Len() + 1024)
	b.WriteString(`<svg xmlns="http://www.w3.org/2000/svg" width="` + itoa(width) + `" height="` + itoa(height) +
		`" viewBox="0 0 ` + itoa(width) + " " + itoa(height) + `" role="img" aria-labelledby="flower-title flower-desc" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, Helvetica, Arial, sans-serif">` + "\n")
	b.WriteString(`<title id="flower-title">` + esc(f.Spec.Title) + "</title>\n")
	b.WriteString(`<desc id="flower-desc">` + esc(desc) + "</desc>\n")
	b.WriteString(`<rect class="ground" width="` + itoa(width) + `" height="` + itoa(height) + `" fill="` + in.ground + `"/>` + "\n")
	b.Write(body.Bytes())
	b.WriteString("</svg>\n")

	sum := sha256.Sum256(b.Bytes())
	return Rendering{SVG: b.Bytes(), SHA256: hex.EncodeToString(sum[:]), Legend: legend}
}

// numberedPetals is the petals the key names, in its order (the largest
// first; ties in drawing order), as indexes into f.Petals: those the spec
// and the view label, at most keyRows.
func numberedPetals(f *Flower, v View) []int {
	if f.Spec.Labels != LabelsName || v.Labels != ViewLabelsSpec || len(f.Petals) == 0 {
		return nil
	}
	order := make([]int, 0, len(f.Petals))
	others := -1
	for i, p := range f.Petals {
		if p.Others {
			others = i
			continue
		}
		order = append(order, i)
	}
	sortByWeight(order, f.Petals)
	if others >= 0 { // the folded tail is named last, whatever it holds
		order = append(order, others)
	}
	limit := min(len(order), keyRows)
	if v.MaxLabels > 0 {
		limit = min(limit, v.MaxLabels)
	}
	return order[:limit]
}

func drawPetals(b *bytes.Buffer, f *Flower, pal palette, in ink, numbered []int, lengthScale float64) {
	n := len(f.Petals)
	wedge := 2 * math.Pi / float64(n)
	half := math.Min(petalFill*wedge/2, maxHalfAngle)
	maxLen := petalMaxLen * lengthScale
	number := make([]int, n) // 1-based; 0 for none
	for k, i := range numbered {
		number[i] = k + 1
	}

	b.WriteString(`<g class="edge" stroke="` + in.edge + `" stroke-width="0.75" stroke-linejoin="round">` + "\n")
	for i, p := range f.Petals {
		phi := -math.Pi/2 + float64(i)*wedge // clockwise from twelve o'clock
		// Every petal is the same shape scaled by its length, so its area goes
		// with length²: length = max × √(relative area) keeps area ∝ size.
		length := maxLen * math.Sqrt(p.Size)
		key := f.Keys[p.Key]
		b.WriteString(`<path d="`)
		b.WriteString(petalPath(phi, half, length))
		b.WriteString(`" fill="` + swatch(pal, key) + `" class="petal"`)
		if p.Account != "" {
			b.WriteString(` data-account="` + esc(p.Account) + `"`)
		}
		b.WriteString(` data-name="` + esc(p.Name) + `" data-weight="` + esc(abbreviate(snapshots.FormatScaled(p.Weight, f.Scale))) +
			`" data-share="` + esc(petalPercent(p)) + `" data-colour="` + esc(key.Label) + `"`)
		if number[i] > 0 {
			b.WriteString(` data-number="` + itoa(number[i]) + `"`)
		}
		b.WriteString(`><title>`)
		b.WriteString(esc(petalTitle(f, p)))
		b.WriteString("</title></path>\n")
	}
	b.WriteString("</g>\n")
	b.WriteString(`<circle class="disc" r="` + num(discR) + `" fill="` + in.disc + `"/>` + "\n")
	// A petal too small to see at scale (a whale among dust) gets a dot at the
	// disc's edge, so its number never points at nothing. The dot is a
	// marker, not an area.
	for i, p := range f.Petals {
		if maxLen*math.Sqrt(p.Size) >= tinyPetal {
			continue
		}
		x, y := polar(discR+3.5, -math.Pi/2+float64(i)*wedge)
		b.WriteString(`<circle cx="` + num(x) + `" cy="` + num(y) + `" r="1.6" fill="` + swatch(pal, f.Keys[p.Key]) + `" stroke="` + in.disc + `" stroke-width="0.5"/>` + "\n")
	}
	if len(numbered) == 0 {
		return
	}
	// Numbers sit past each petal's tip, far enough out that neighbours'
	// (about one number wide) do not touch, and never past the frame.
	minR := math.Min(numberR, (textFont*1.4)/wedge)
	b.WriteString(`<g class="number ink" font-size="` + num(textFont) + `" font-weight="600" fill="` + in.text + `" text-anchor="middle">` + "\n")
	for i, p := range f.Petals {
		if number[i] == 0 {
			continue
		}
		phi := -math.Pi/2 + float64(i)*wedge
		tip := discR + maxLen*math.Sqrt(p.Size)
		r := math.Min(math.Max(tip+labelGap+textFont/2, minR), numberR)
		if r-tip > 2*labelGap+textFont/2 {
			x1, y1 := polar(tip+2, phi)
			x2, y2 := polar(r-textFont/2-2, phi)
			b.WriteString(`<line class="leader" x1="` + num(x1) + `" y1="` + num(y1) + `" x2="` + num(x2) + `" y2="` + num(y2) + `" stroke="` + in.leader + `" stroke-width="0.75"/>` + "\n")
		}
		x, y := polar(r, phi)
		b.WriteString(`<text class="number" x="` + num(x) + `" y="` + num(y) + `" dy="0.35em">` + itoa(number[i]) + "</text>\n")
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

// petalTitle is a petal's text alternative: who, how much, of what colour.
func petalTitle(f *Flower, p Petal) string {
	s := p.Name + ": " + petalPercent(p) + " of the total (weight " + abbreviate(snapshots.FormatScaled(p.Weight, f.Scale))
	if k := f.Keys[p.Key]; k.Kind == KeyGroup || k.Kind == KeyUngrouped {
		s += ", " + k.Label
	}
	return s + ")"
}

// drawKey names the numbered petals, one a row, from y; it answers the y
// below it.
func drawKey(b *bytes.Buffer, f *Flower, pal palette, in ink, numbered []int, y int) int {
	b.WriteString(`<g font-size="` + num(textFont) + `">` + "\n")
	for k, i := range numbered {
		p := f.Petals[i]
		y += rowH
		b.WriteString(`<text class="key ink" x="` + itoa(margin+20) + `" y="` + itoa(y) + `" text-anchor="end" font-weight="600" fill="` + in.text + `">` + itoa(k+1) + "</text>")
		b.WriteString(`<rect x="` + itoa(margin+26) + `" y="` + itoa(y-10) + `" width="11" height="11" rx="2" fill="` + swatch(pal, f.Keys[p.Key]) + `"/>`)
		b.WriteString(`<text class="key ink" x="` + itoa(margin+44) + `" y="` + itoa(y) + `" fill="` + in.text + `">` + esc(cut(p.Name, keyChars)) + "</text>")
		b.WriteString(`<text class="key muted" x="` + itoa(canvasW-margin) + `" y="` + itoa(y) + `" text-anchor="end" fill="` + in.muted + `">` + esc(petalPercent(p)) + "</text>\n")
	}
	if rest := len(f.Petals) - len(numbered); rest > 0 {
		y += rowH
		b.WriteString(`<text class="key muted" x="` + itoa(margin) + `" y="` + itoa(y) + `" fill="` + in.muted + `">` +
			esc(plural(rest, "more petal")+", each named in its own title") + "</text>\n")
	}
	b.WriteString("</g>\n")
	return y + 6
}

// drawLegend draws the colours, two to a row, from y; it answers the y below
// it.
func drawLegend(b *bytes.Buffer, f *Flower, legend []LegendEntry, in ink, y int) int {
	b.WriteString(`<g font-size="` + num(textFont) + `">` + "\n")
	heading := map[string]string{ColourGroup: "Colour: group", ColourBand: "Colour: share of the total"}[f.Spec.Colour]
	y += rowH
	b.WriteString(`<text class="legend ink" x="` + itoa(margin) + `" y="` + itoa(y) + `" font-weight="600" fill="` + in.text + `">` + esc(heading) + "</text>\n")
	colW := (canvasW - 2*margin) / 2
	for i, e := range legend {
		if i%2 == 0 {
			y += rowH
		}
		x := margin + (i%2)*colW
		b.WriteString(`<rect x="` + itoa(x) + `" y="` + itoa(y-11) + `" width="13" height="13" rx="3" fill="` + e.Swatch + `" stroke="` + in.swatchEdge + `" stroke-width="0.5"/>`)
		room := legendChars
		if i%2 == 0 && i == len(legend)-1 { // alone on its row: the whole width
			room = 2 * legendChars
		}
		b.WriteString(`<text class="legend ink" x="` + itoa(x+19) + `" y="` + itoa(y) + `" fill="` + in.text + `">` + esc(cut(e.Label, room)) + "</text>\n")
	}
	area := map[string]string{
		SizeWeight: "Petal area: weight",
		SizeSqrt:   "Petal area: square root of weight",
		SizeEqual:  "Petal area: equal for every petal",
	}[f.Spec.Size]
	y += rowH + 4
	b.WriteString(`<text class="legend muted" x="` + itoa(margin) + `" y="` + itoa(y) + `" fill="` + in.muted + `">` + esc(area) + "</text>\n")
	b.WriteString("</g>\n")
	return y
}

// wrap breaks s into at most lines lines of n columns, at spaces where it
// can; the last line is cut with "…" when the rest does not fit.
func wrap(s string, n, lines int) []string {
	words := strings.Fields(s)
	var out []string
	cur := ""
	for i, word := range words {
		next := word
		if cur != "" {
			next = cur + " " + word
		}
		if columns(next) <= n {
			cur = next
			continue
		}
		if cur == "" { // one word wider than a line
			cur = word
		}
		if len(out) == lines-1 {
			return append(out, cut(strings.Join(append([]string{cur}, words[i:]...), " "), n))
		}
		out = append(out, cut(cur, n))
		cur = word
		if cur == next {
			cur = ""
		}
	}
	if cur != "" {
		out = append(out, cut(cur, n))
	}
	return out
}

func columns(s string) int {
	w := 0
	for _, r := range s {
		w += runeWidth(r)
	}
	return w
}

// subtitleLines is what the picture shows of its reading under the title,
// in lines that fit the frame.
func subtitleLines(f *Flower) []string {
	own := len(f.Petals)
	if own > 0 && f.Petals[own-1].Others {
		own--
	}
	first := plural(own, "petal") + " of " + plural(f.Count, "account")
	second := "snapshot " + short(f.Spec.Snapshot) + " · total weight " + abbreviate(snapshots.FormatScaled(f.Total, f.Scale))
	return []string{cut(first, lineChars), cut(second, lineChars)}
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
	// Petals as large as the largest: among equals there is no "largest".
	tied := 0
	for _, p := range f.Petals {
		if !p.Others && largest != nil && p.Weight.Cmp(largest.Weight) == 0 {
			tied++
		}
	}
	switch {
	case largest != nil && tied > 1 && tied == own && f.Folded == 0:
		s.WriteString(" Each holds " + Percent(largest.Share) + " of the total weight")
	case largest != nil && tied > 1:
		s.WriteString(" The " + groupDigits(tied) + " largest hold " + Percent(largest.Share) + " of the total weight each")
	case largest != nil:
		s.WriteString(" The largest, " + cut(largest.Name, 40) + ", holds " + Percent(largest.Share) + " of the total weight")
	}
	if largest != nil {
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
