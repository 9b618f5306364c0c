package specs

import (
	"bytes"
	"encoding/xml"
	"flag"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/snapshots"
)

var update = flag.Bool("update", false, "rewrite the golden SVGs in testdata/golden")

type goldenCase struct {
	name   string
	snap   *snapshots.Snapshot
	sha    string
	intent string
	view   View
	edit   func(*Spec)
}

func goldenCases() []goldenCase {
	bright := DefaultView()
	bright.Palette = PaletteTolBright
	return []goldenCase{
		{name: "dao", snap: daoSnapshot(), sha: daoSHA, view: DefaultView()},
		{name: "dao-bands-tol-bright", snap: daoSnapshot(), sha: daoSHA, intent: "colour by band, by name", view: bright},
		{name: "holders-1000", snap: holdersSnapshot(1000), sha: holdersSHA, view: DefaultView()},
		{name: "holders-100000", snap: holdersSnapshot(100_000), sha: holdersSHA, view: DefaultView()},
		{name: "equal", snap: equalSnapshot(), sha: equalSHA, view: DefaultView()},
		{name: "whale", snap: whaleSnapshot(), sha: whaleSHA, view: DefaultView()},
	}
}

func renderCase(t testing.TB, c goldenCase) Rendering {
	spec, err := Propose(c.snap, c.sha, c.intent)
	require.NoError(t, err)
	if c.edit != nil {
		c.edit(&spec)
	}
	f, err := Layout(spec, c.snap)
	require.NoError(t, err)
	return Render(f, c.view)
}

// The golden files are the reviewed pictures (docs/flowers/*.png are their
// previews). A change to them is a change to what people see: look at it.
func TestRenderGolden(t *testing.T) {
	for _, c := range goldenCases() {
		t.Run(c.name, func(t *testing.T) {
			r := renderCase(t, c)
			again := renderCase(t, c)
			require.Equal(t, r.SVG, again.SVG, "rendering twice gives the same bytes")
			require.Equal(t, r.SHA256, again.SHA256)

			path := filepath.Join("testdata", "golden", c.name+".svg")
			if *update {
				require.NoError(t, os.MkdirAll(filepath.Dir(path), 0o755))
				require.NoError(t, os.WriteFile(path, r.SVG, 0o644))
			}
			want, err := os.ReadFile(path)
			require.NoError(t, err, "run go test ./domain/specs -update to write the golden file")
			assert.Equal(t, string(want), string(r.SVG), "the SVG differs from %s", path)
			assertWellFormed(t, r.SVG)
		})
	}
}

// assertWellFormed parses the SVG as XML: every name escaped, nothing external.
func assertWellFormed(t *testing.T, svg []byte) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(svg))
	dec.Strict = true
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		require.NoError(t, err)
		if el, ok := tok.(xml.StartElement); ok {
			assert.NotEqual(t, "script", el.Name.Local)
			assert.NotEqual(t, "image", el.Name.Local)
			assert.NotEqual(t, "foreignObject", el.Name.Local)
			for _, a := range el.Attr {
				assert.NotEqual(t, "href", a.Name.Local, "no links or external resources")
				assert.False(t, strings.HasPrefix(a.Name.Local, "on"), "no event handlers")
				assert.NotContains(t, a.Value, "url(", "no external resources")
			}
		}
	}
	assert.NotContains(t, string(svg), "http://www.w3.org/1999/xlink")
	assert.Equal(t, 1, strings.Count(string(svg), "http://"), "the SVG namespace is the only URL")
}

func TestRenderEscapesHostileNames(t *testing.T) {
	r := renderCase(t, goldenCase{snap: daoSnapshot(), sha: daoSHA, view: DefaultView()})
	svg := string(r.SVG)
	assert.NotContains(t, svg, "<script")
	assert.Contains(t, svg, "&lt;script&gt;alert(1)&lt;/script&gt;", "the name is drawn as text")
	assert.Contains(t, svg, "Erin &amp; &quot;friends&quot;")
	assert.Contains(t, svg, "Bots &amp; &lt;tools&gt;")
	assert.NotContains(t, svg, "\x00")
	assert.NotContains(t, svg, "\x1b")
	assert.Contains(t, svg, "a\uFFFDb\uFFFDc", "characters XML cannot hold are replaced")
	assertWellFormed(t, r.SVG)

	// A hostile title, too.
	spec, err := Propose(daoSnapshot(), daoSHA, "")
	require.NoError(t, err)
	spec.Title = `</title><script>alert("t")</script>`
	f, err := Layout(spec, daoSnapshot())
	require.NoError(t, err)
	out := Render(f, DefaultView())
	assert.NotContains(t, string(out.SVG), "<script")
	assertWellFormed(t, out.SVG)
}

func TestRenderHasTitleDescAndLegend(t *testing.T) {
	r := renderCase(t, goldenCase{snap: daoSnapshot(), sha: daoSHA, view: DefaultView()})
	svg := string(r.SVG)
	assert.Contains(t, svg, `<title id="flower-title">Members of example.sputnik-dao.near</title>`)
	assert.Regexp(t, `<desc id="flower-desc">[^<]+</desc>`, svg)
	assert.Contains(t, svg, `aria-labelledby="flower-title flower-desc"`)
	labels := []string{}
	for _, e := range r.Legend {
		labels = append(labels, e.Label)
		assert.Regexp(t, `^#[0-9A-F]{6}$`, e.Swatch)
		assert.Contains(t, svg, `fill="`+e.Swatch+`"`, "every legend colour is drawn")
	}
	assert.Equal(t, []string{"Council", "Community", "Bots & <tools>"}, labels)
}

// Petal areas are proportional to their sizes: measured on the drawn paths.
func TestPetalAreaIsProportionalToSize(t *testing.T) {
	for _, size := range Sizes {
		c := goldenCase{snap: holdersSnapshot(200), sha: holdersSHA, view: DefaultView(), edit: func(s *Spec) { s.Size = size; s.Labels = LabelsNone }}
		spec, err := Propose(c.snap, c.sha, "")
		require.NoError(t, err)
		c.edit(&spec)
		f, err := Layout(spec, c.snap)
		require.NoError(t, err)
		svg := string(Render(f, DefaultView()).SVG)
		paths := regexp.MustCompile(`<path d="([^"]+)"`).FindAllStringSubmatch(svg, -1)
		require.Len(t, paths, len(f.Petals))
		biggest := 0.0
		areas := make([]float64, len(paths))
		for i, p := range paths {
			areas[i] = pathArea(t, p[1])
			biggest = math.Max(biggest, areas[i])
		}
		for i, p := range f.Petals {
			if p.Size*petalMaxLen*petalMaxLen < 400 { // rounding to 0.01 dominates slivers
				continue
			}
			assert.InDelta(t, p.Size, areas[i]/biggest, 0.02, "%s: petal %d (%s)", size, i, p.Name)
		}
	}
}

// pathArea samples a path of M/C/Z commands (as petalPath writes them) and
// measures its area by the shoelace formula.
func pathArea(t *testing.T, d string) float64 {
	nums := regexp.MustCompile(`-?[0-9.]+`).FindAllString(d, -1)
	v := make([]float64, len(nums))
	for i, s := range nums {
		f, err := strconv.ParseFloat(s, 64)
		require.NoError(t, err)
		v[i] = f
	}
	require.Len(t, v, 14) // M x y, C ×3 points, C ×3 points
	pts := [][2]float64{{v[0], v[1]}}
	cur := [2]float64{v[0], v[1]}
	for seg := 0; seg < 2; seg++ {
		o := 2 + seg*6
		p1, p2, p3 := [2]float64{v[o], v[o+1]}, [2]float64{v[o+2], v[o+3]}, [2]float64{v[o+4], v[o+5]}
		for k := 1; k <= 200; k++ {
			u := float64(k) / 200
			a, b, c, e := (1-u)*(1-u)*(1-u), 3*(1-u)*(1-u)*u, 3*(1-u)*u*u, u*u*u
			pts = append(pts, [2]float64{a*cur[0] + b*p1[0] + c*p2[0] + e*p3[0], a*cur[1] + b*p1[1] + c*p2[1] + e*p3[1]})
		}
		cur = p3
	}
	area := 0.0
	for i := range pts {
		j := (i + 1) % len(pts)
		area += pts[i][0]*pts[j][1] - pts[j][0]*pts[i][1]
	}
	return math.Abs(area) / 2
}

func TestRenderFoldsTheTail(t *testing.T) {
	snap := holdersSnapshot(1000)
	spec, err := Propose(snap, holdersSHA, "")
	require.NoError(t, err)
	f, err := Layout(spec, snap)
	require.NoError(t, err)
	last := f.Petals[len(f.Petals)-1]
	assert.True(t, last.Others)
	assert.Equal(t, 1000-spec.Petals.Top, last.Folded)
	assert.LessOrEqual(t, len(f.Petals), MaxPetals+1)
	r := Render(f, DefaultView())
	assert.Contains(t, string(r.SVG), groupDigits(last.Folded)+" others")
	assert.Equal(t, KeyOthers, f.Keys[len(f.Keys)-1].Kind, "the tail's colour is the legend's last")

	hidden := spec
	hidden.Others = OthersHide
	h, err := Layout(hidden, snap)
	require.NoError(t, err)
	assert.False(t, h.Petals[len(h.Petals)-1].Others)
	assert.Contains(t, Interpret(h), "are not drawn")
}

func TestViewChangesOnlyTheDrawing(t *testing.T) {
	snap := daoSnapshot()
	spec, err := Propose(snap, daoSHA, "")
	require.NoError(t, err)
	f, err := Layout(spec, snap)
	require.NoError(t, err)
	plain := Render(f, DefaultView())
	muted := DefaultView()
	muted.Palette = PaletteTolMuted
	m := Render(f, muted)
	assert.NotEqual(t, plain.SHA256, m.SHA256)
	require.Len(t, m.Legend, len(plain.Legend))
	for i := range m.Legend {
		assert.Equal(t, plain.Legend[i].Label, m.Legend[i].Label, "the same keys, other colours")
	}
	none := DefaultView()
	none.Labels = ViewLabelsNone
	assert.NotContains(t, string(Render(f, none).SVG), `dy="0.35em"`)
	two := DefaultView()
	two.MaxLabels = 2
	assert.Equal(t, 2, strings.Count(string(Render(f, two).SVG), `dy="0.35em"`))
}

func TestCutCountsWideCharactersTwice(t *testing.T) {
	assert.Equal(t, "alice.near", cut("alice.near", 22))
	assert.Equal(t, "abcdefghi…", cut("abcdefghijklmnop", 10))
	assert.Equal(t, "東京都渋…", cut("東京都渋谷区神南一丁目", 10), "four wide characters and the ellipsis fit ten columns")
	assert.Equal(t, "🌸🌸🌸🌸…", cut("🌸🌸🌸🌸🌸🌸", 10))
	assert.Equal(t, "ab…", cut("ab cdef", 4), "no space left before the ellipsis")
}

// Among equals there is no "largest": the sentence says each holds the same.
func TestInterpretSaysEqualsAreEqual(t *testing.T) {
	snap := equalSnapshot()
	spec, err := Propose(snap, equalSHA, "")
	require.NoError(t, err)
	f, err := Layout(spec, snap)
	require.NoError(t, err)
	got := Interpret(f)
	assert.NotContains(t, got, "The largest")
	assert.Contains(t, got, "Each holds 12.5% of the total weight; 5 accounts together hold more than half.")

	top := spec
	top.Petals.Top = 3
	f, err = Layout(top, snap)
	require.NoError(t, err)
	assert.Contains(t, Interpret(f), "The 3 largest hold 12.5% of the total weight each", "tied petals with a folded tail")
}

// The tile is the flower alone: no title, key or legend to shrink, and the
// same petals with their titles.
func TestTileIsTheFlowerAlone(t *testing.T) {
	snap := daoSnapshot()
	spec, err := Propose(snap, daoSHA, "")
	require.NoError(t, err)
	f, err := Layout(spec, snap)
	require.NoError(t, err)
	full := string(Render(f, DefaultView()).SVG)
	tile := RenderLook(f, DefaultView(), Look{Form: FormTile, Dark: true})
	svg := string(tile.SVG)
	assertWellFormed(t, tile.SVG)
	assert.Contains(t, svg, `viewBox="0 0 400 400"`)
	assert.NotContains(t, svg, "<text")
	assert.Equal(t, strings.Count(full, "<path d="), strings.Count(svg, "<path d="))
	assert.Contains(t, svg, `fill="#1E2026"`, "drawn on the dark ground")
	assert.Contains(t, full, `class="title ink"`)
	assert.Contains(t, full, `data-account="`)
}
