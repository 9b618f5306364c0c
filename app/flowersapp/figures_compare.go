package flowersapp

import (
	"context"

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
	return toolkit.WithIO(toolkit.Tool{
		Name: ToolCompareFigures,
		Description: "Compare two stored readings, a (before) and b (after), usually two readings of one map: every figure of compute_figures for each, " +
			"each figure's change (b − a of the published values, exact), the accounts that entered and left (the largest first), the largest movers by share " +
			"up and down, and each group's share before and after. Accounts are matched by id. Lists are paged together by offset and limit (default 10, at most 100), " +
			"each with its total. Readings of another chain, reader or token are bad_input naming b; a snapshot not stored here is not_found.",
	}, func(ctx context.Context, _ toolkit.Call, in compareInput) (CompareResult, error) {
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

// What CompareResult's type cannot say.
func (CompareResult) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(toolkit.Property(s, "groups").Items, "in").Enum = []any{"both", "a", "b"}
	toolkit.Property(s, "change").Description = "b's figures less a's; total_weight an exact signed decimal, each fraction the published values subtracted, null when either is"
}
