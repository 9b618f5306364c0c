// Package specs is the flower spec (flower-spec/v1): which accounts of a
// snapshot become petals and how they are sized, coloured, labelled and
// ordered; the view (view/v1) that only changes how a flower is drawn;
// proposing a spec for a snapshot, validating one, and rendering a spec and
// its snapshot to a deterministic SVG. A spec is named by the SHA-256 of its
// canonical JSON.
package specs

// Format ids.
const (
	SpecSchema = "flower-spec/v1"
	ViewSchema = "view/v1"
)

// MaxPetals is the most accounts a flower draws as petals of their own; the
// rest fold into one "others" petal. Past about sixty, petals thinner than a
// few degrees and their labels stop being readable (docs/flowers.md).
const MaxPetals = 60

// MaxTitle is the longest title, in characters.
const MaxTitle = 200

// Size decides what a petal's area is proportional to.
const (
	SizeWeight = "weight" // the account's weight
	SizeEqual  = "equal"  // every petal the same
	SizeSqrt   = "sqrt"   // the square root of the weight: small holders stay visible
)

// Colour decides what a petal's colour tells.
const (
	ColourGroup = "group" // the account's first group, in the snapshot's group order
	ColourBand  = "band"  // the band of its share of the total: ≥10%, ≥1%, ≥0.1%, less
)

// Labels decides what is written beside a petal.
const (
	LabelsName = "name" // the account's label (or its account id) and its share
	LabelsNone = "none"
)

// Order decides the order of petals, clockwise from twelve o'clock. The
// "others" petal is always last.
const (
	OrderWeight = "weight" // largest first
	OrderGroup  = "group"  // by colour (group or band), then largest first
	OrderName   = "name"   // by the name written on the petal
)

// Others decides what happens to accounts that are not petals.
const (
	OthersFold = "fold" // one grey petal holding all of them
	OthersHide = "hide" // not drawn (the description still says how many)
)

// Enumerations, in the order the schema lists them.
var (
	Sizes   = []string{SizeWeight, SizeEqual, SizeSqrt}
	Colours = []string{ColourGroup, ColourBand}
	Labels  = []string{LabelsName, LabelsNone}
	Orders  = []string{OrderWeight, OrderGroup, OrderName}
	Others  = []string{OthersFold, OthersHide}
)

// Spec is one flower-spec/v1. Every field is written out when it is marshalled,
// so a spec has one canonical form and one name.
type Spec struct {
	Schema   string `json:"schema"`
	Snapshot string `json:"snapshot"` // the sha256 of the snapshot it draws
	Title    string `json:"title"`
	Petals   Petals `json:"petals"`
	Size     string `json:"size"`
	Colour   string `json:"colour"`
	Labels   string `json:"labels"`
	Order    string `json:"order"`
	Legend   bool   `json:"legend"` // draw the legend in the picture
	Others   string `json:"others"`
}

// Petals says which accounts become petals: the Top largest (after the group
// filter) whose share of the snapshot's total is at least MinShare.
type Petals struct {
	Top      int      `json:"top"`
	MinShare float64  `json:"min_share"`
	Groups   []string `json:"groups"` // empty: every account; else only accounts in one of these
}

// normalise gives absent optional fields the value they mean, so equal specs
// marshal to equal bytes.
func (s *Spec) normalise() {
	if s.Petals.Groups == nil {
		s.Petals.Groups = []string{}
	}
}
