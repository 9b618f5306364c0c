package flowersapp

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/snapshotsapp"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
)

// ToolCompareFigures is the contract's name for comparing two readings.
const ToolCompareFigures = "compare_figures"

// CompareSide is one reading of a comparison: compute_figures' answer for
// it, with when it was read and by which reader.
type CompareSide struct {
	FiguresResult
	AsOf    string `json:"as_of"`   // its block's time, RFC 3339
	Network string `json:"network"` // the reader's id
	Title   string `json:"title"`
}

// CompareResult is what compare_figures answers (docs/figures.md,
// "Comparing two readings").
type CompareResult struct {
	A          CompareSide             `json:"a"`
	B          CompareSide             `json:"b"`
	Change     snapshots.FiguresChange `json:"change"`
	Groups     []snapshots.GroupChange `json:"groups"`
	Entered    snapshots.AccountMoves  `json:"entered"`
	Left       snapshots.AccountMoves  `json:"left"`
	MoversUp   snapshots.AccountMoves  `json:"movers_up"`
	MoversDown snapshots.AccountMoves  `json:"movers_down"`
	Page       compareResultPage       `json:"page"`
	Demo       bool                    `json:"demo,omitempty"` // either side is the made-up demo reading
}

// compareResultPage says which slice of each list the answer holds.
type compareResultPage struct {
	Offset int `json:"offset"`
	Limit  int `json:"limit"`
}

// CompareFigures is compare_figures: two stored readings, a before b, on
// their ranked weights as the snapshot cache keeps them.
func (s *FlowerService) CompareFigures(ctx context.Context, a, b string, page snapshots.ComparePage) (CompareResult, error) {
	la, err := s.loadSide(ctx, "a", a)
	if err != nil {
		return CompareResult{}, err
	}
	lb, err := s.loadSide(ctx, "b", b)
	if err != nil {
		return CompareResult{}, err
	}
	ra, err := la.Ranked()
	if err != nil {
		return CompareResult{}, err
	}
	rb, err := lb.Ranked()
	if err != nil {
		return CompareResult{}, err
	}
	c, err := snapshots.Compare(la.Snapshot, ra, lb.Snapshot, rb, page)
	if err != nil {
		return CompareResult{}, err
	}
	side := func(sha string, l snapshotsapp.Loaded, fs snapshots.FigureSet) CompareSide {
		return CompareSide{
			FiguresResult: FiguresResult{SHA256: sha, FigureSet: fs, Origin: l.Origin, Demo: l.Demo()},
			AsOf:          l.Snapshot.Block.Time, Network: l.Snapshot.Network, Title: l.Snapshot.Title,
		}
	}
	if page.Limit == 0 {
		page.Limit = snapshots.DefaultCompareLimit
	}
	return CompareResult{
		A: side(a, la, c.A), B: side(b, lb, c.B),
		Change: c.Change, Groups: c.Groups, Entered: c.Entered, Left: c.Left, MoversUp: c.MoversUp, MoversDown: c.MoversDown,
		Page: compareResultPage{Offset: page.Offset, Limit: page.Limit},
		Demo: la.Demo() || lb.Demo(),
	}, nil
}

// loadSide loads one reading of a comparison, a refusal naming its field.
func (s *FlowerService) loadSide(ctx context.Context, field, sha string) (snapshotsapp.Loaded, error) {
	if err := snapshotsapp.CheckSHA256(field, sha); err != nil {
		return snapshotsapp.Loaded{}, err
	}
	l, err := s.LoadSnapshot(ctx, sha)
	if errs.Is(err, errs.NotFound) {
		return l, errs.Newf(errs.NotFound, "%s: no snapshot %s is stored here", field, sha).
			WithHint("get_snapshot reads one; a map's readings are listed by GET /api/v1/maps/:id")
	}
	return l, err
}

// compareTool is compare_figures as FlowerService offers it.
func (s *FlowerService) compareTool() toolkit.Tool {
	return toolkit.WithInput(toolkit.Tool{
		Name: ToolCompareFigures,
		Description: "Compare two stored readings, a (before) and b (after), usually two readings of one map: every figure of compute_figures for each, " +
			"each figure's change (b − a of the published values, exact), the accounts that entered and left (the largest first), the largest movers by share " +
			"up and down, and each group's share before and after. Accounts are matched by id. Lists are paged together by offset and limit (default 10, at most 100), " +
			"each with its total. Readings of another chain, reader or token are bad_input naming b; a snapshot not stored here is not_found.",
		Output: json.RawMessage(compareOutputSchema),
	}, func(ctx context.Context, _ toolkit.Call, in compareInput) (any, error) {
		return s.CompareFigures(ctx, in.A, in.B, snapshots.ComparePage{Offset: in.Offset, Limit: in.Limit})
	})
}

type compareInput struct {
	A      string `json:"a" jsonschema:"the earlier reading's snapshot sha256"`
	B      string `json:"b" jsonschema:"the later reading's snapshot sha256"`
	Offset int    `json:"offset,omitempty" jsonschema:"where each list's page starts (default 0)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"how many of each list (default 10)"`
}

func (compareInput) RefineSchema(sc *jsonschema.Schema) {
	toolkit.Property(sc, "a").Pattern = toolkit.Sha256Pattern
	toolkit.Property(sc, "b").Pattern = toolkit.Sha256Pattern
	toolkit.Property(sc, "offset").Minimum = jsonschema.Ptr(0.0)
	toolkit.Property(sc, "offset").Maximum = jsonschema.Ptr(float64(snapshots.MaxCompareOffset))
	toolkit.Property(sc, "limit").Minimum = jsonschema.Ptr(1.0)
	toolkit.Property(sc, "limit").Maximum = jsonschema.Ptr(float64(snapshots.MaxCompareLimit))
}

const accountMovesSchema = `{
      "type": "object",
      "required": ["total", "accounts"],
      "properties": {
        "total": { "type": "integer", "description": "how many the whole list holds" },
        "accounts": { "type": "array", "items": {
          "type": "object",
          "required": ["id", "label", "weight_before", "weight_after", "share_before", "share_after", "change"],
          "properties": {
            "id": { "type": "string" }, "label": { "type": "string" },
            "weight_before": { "type": "string", "description": "exact decimal; 0 when absent" },
            "weight_after": { "type": "string", "description": "exact decimal; 0 when absent" },
            "share_before": { "type": ["number", "null"] }, "share_after": { "type": ["number", "null"] },
            "change": { "type": ["number", "null"], "description": "share_after − share_before" } } } } } }`

const compareSideSchema = `{ "type": "object", "required": ["sha256", "as_of", "network", "count", "total_weight", "groups"], "properties": {
      "sha256": { "type": "string" }, "as_of": { "type": "string" }, "network": { "type": "string" }, "title": { "type": "string" },
      "origin": { "type": "string" }, "demo": { "type": "boolean" },` + figureProperties + `,
      "groups": { "type": "array", "items": { "type": "object" } } } }`

const compareOutputSchema = `{
  "type": "object",
  "required": ["a", "b", "change", "groups", "entered", "left", "movers_up", "movers_down", "page"],
  "properties": {
    "a": ` + compareSideSchema + `,
    "b": ` + compareSideSchema + `,
    "change": { "type": "object", "description": "b's figures less a's; total_weight an exact signed decimal, each fraction the published values subtracted, null when either is", "properties": {
      "count": { "type": "integer" },
      "total_weight": { "type": "string" },
      "top1_share": { "type": ["number", "null"] },
      "top10_share": { "type": ["number", "null"] },
      "top1pct_share": { "type": ["number", "null"] },
      "top1pct_count": { "type": "integer" },
      "gini": { "type": ["number", "null"] },
      "nakamoto": { "type": ["integer", "null"] },
      "hhi": { "type": ["number", "null"] } } },
    "groups": { "type": "array", "items": { "type": "object", "required": ["id", "label", "in", "share_before", "share_after", "change"], "properties": {
      "id": { "type": "string" }, "label": { "type": "string" },
      "in": { "type": "string", "enum": ["both", "a", "b"] },
      "share_before": { "type": ["number", "null"] }, "share_after": { "type": ["number", "null"] }, "change": { "type": ["number", "null"] },
      "count_before": { "type": "integer" }, "count_after": { "type": "integer" } } } },
    "entered": ` + accountMovesSchema + `,
    "left": ` + accountMovesSchema + `,
    "movers_up": ` + accountMovesSchema + `,
    "movers_down": ` + accountMovesSchema + `,
    "page": { "type": "object", "properties": { "offset": { "type": "integer" }, "limit": { "type": "integer" } } },
    "demo": { "type": "boolean" }
  }
}`
