package specs

// View is one view/v1: how flowers are drawn for someone — the palette and
// which labels show. It never changes what a flower says (which accounts,
// their sizes, what colours mean), only how it looks.
type View struct {
	Schema  string `json:"schema"`
	Palette string `json:"palette"`
	// Labels is "spec" (as the spec says) or "none" (no labels whatever the
	// spec says).
	Labels string `json:"labels"`
	// MaxLabels labels at most this many petals, the largest first; the
	// others keep their tooltip. 0 with Labels "spec" means no limit.
	MaxLabels int `json:"max_labels"`
}

// Palettes, each distinguishable by readers with the common colour-vision
// deficiencies (Okabe & Ito 2008; Paul Tol's qualitative schemes).
const (
	PaletteOkabeIto  = "okabe-ito"
	PaletteTolBright = "tol-bright"
	PaletteTolMuted  = "tol-muted"
)

// ViewLabels values.
const (
	ViewLabelsSpec = "spec"
	ViewLabelsNone = "none"
)

// Enumerations of a view, in the order the schema lists them.
var (
	PaletteNames = []string{PaletteOkabeIto, PaletteTolBright, PaletteTolMuted}
	ViewLabelSet = []string{ViewLabelsSpec, ViewLabelsNone}
)

// DefaultView is the view used when none is given.
func DefaultView() View {
	return View{Schema: ViewSchema, Palette: PaletteOkabeIto, Labels: ViewLabelsSpec, MaxLabels: 0}
}

// palette is the colours of one palette: qualitative colours for groups (in
// order), and the fixed greys.
type palette struct {
	groups    []string
	ungrouped string // accounts in none of the coloured groups
	others    string // the folded tail
}

// The qualitative colours leave out each scheme's black and grey, which are
// kept for "no group" and "others" so those never look like a group.
var palettes = map[string]palette{
	PaletteOkabeIto: {
		groups:    []string{"#E69F00", "#56B4E9", "#009E73", "#0072B2", "#D55E00", "#CC79A7", "#F0E442"},
		ungrouped: "#6E6E6E",
		others:    "#C8C8C8",
	},
	PaletteTolBright: {
		groups:    []string{"#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377"},
		ungrouped: "#6E6E6E",
		others:    "#BBBBBB",
	},
	PaletteTolMuted: {
		groups:    []string{"#CC6677", "#332288", "#DDCC77", "#117733", "#88CCEE", "#882255", "#44AA99", "#999933", "#AA4499"},
		ungrouped: "#6E6E6E",
		others:    "#DDDDDD",
	},
}

// bandColours are the weight bands, largest first, on a sequential scale
// (viridis stops) that reads in order for every common colour-vision
// deficiency and in greyscale. The same in every palette, since bands are an
// order, not categories.
var bandColours = []string{"#440154", "#31688E", "#35B779", "#FDE725"}

// bandLabels name the bands in the legend.
var bandLabels = []string{"10% or more each", "1% to 10% each", "0.1% to 1% each", "under 0.1% each"}
