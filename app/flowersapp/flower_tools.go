package flowersapp

import (
	"bytes"
	"context"
	"encoding/json"
	"github.com/petal-near/petal/domain/specs"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
)

// Tools implements ToolSet.
func (s *FlowerService) Tools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolComputeFigures,
			Description: "Concentration figures of a snapshot, exact from its decimal weights: count, total weight, the shares of the top account, the top 10 and the top 1% (rounded up to whole accounts), the Gini coefficient (population form), the Nakamoto coefficient (the fewest accounts holding more than half) and the Herfindahl–Hirschman index, for the whole snapshot and each group. Fractions are rounded half to even to six decimals; a share of nothing is null.",
		}, func(ctx context.Context, _ toolkit.Call, in FiguresInput) (FiguresResult, error) {
			if string(bytes.TrimSpace(in.Snapshot)) == "null" {
				in.Snapshot = nil
			}
			return s.ComputeFigures(ctx, in.SHA256, in.Snapshot, in.Group)
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolProposeSpec,
			Description: "Propose a flower spec (flower-spec/v1) for a stored snapshot: enough petals to show its shape, the tail folded into one \"others\" petal, colours that tell its groups apart, with a sentence saying what the flower shows. intent, in plain words, can ask for \"top 20\", \"equal sizes\", \"square root\", \"colour by band\", \"no labels\", \"by name\", \"hide others\" or \"only <group>\". The spec is kept, so /d/<spec_sha256> opens it.",
		}, func(ctx context.Context, call toolkit.Call, in ProposeInput) (Proposal, error) {
			return s.Propose(ctx, call.Caller.Subject, in.SHA256, in.Intent)
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolValidateSpec,
			Description: "Check a flower spec against flower-spec/v1 and against its snapshot (stored here, groups it names exist, at most 60 petals). Answers { valid, problems: [{ path, message }] } with JSON Pointer paths; a valid spec is kept, so /d/<spec_sha256> opens it.",
		}, func(ctx context.Context, call toolkit.Call, in validateInput) (Validation, error) {
			return s.Validate(ctx, call.Caller.Subject, in.Spec)
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolRenderFlower,
			Description: "Draw a flower spec as SVG: petals around a centre, each petal's area proportional to its size, colour-blind-safe colours, a title and description for screen readers, every name escaped. The same spec, snapshot and view give the same bytes and render_sha256. view (view/v1) changes only how it is drawn: palette and labels; without it, the signed-in person's own view (GET /api/v1/me/view), or the default view. An invalid spec is invalid_spec with the problems validate_spec gives.",
		}, func(ctx context.Context, call toolkit.Call, in renderInput) (Rendered, error) {
			view, err := s.ViewFor(ctx, call.Caller.Subject, in.View)
			if err != nil {
				return Rendered{}, err
			}
			return s.RenderFor(ctx, call.Caller, in.Spec, view)
		}),
		s.compareTool(),
		s.votingBlocsTool(),
	}
}

// The flower tools' inputs: each tool's input is declared here and nowhere
// else (see WithInput). A spec and a view stay JSON for the tool to check:
// their problems come back as invalid_spec (a spec) or bad_input listing
// every problem (a view), with JSON Pointers, as validate_spec gives them.
type (
	FiguresInput struct {
		SHA256   string          `json:"sha256,omitempty" jsonschema:"a stored snapshot's name"`
		Snapshot json.RawMessage `json:"snapshot,omitempty" jsonschema:"a snapshot/v1 sent inline instead of sha256"`
		Group    string          `json:"group,omitempty" jsonschema:"only this group's figures in groups"`
	}
	ProposeInput struct {
		SHA256 string `json:"sha256" jsonschema:"a stored snapshot's name"`
		Intent string `json:"intent,omitempty" jsonschema:"what the person wants to see, in plain words"`
	}
	validateInput struct {
		Spec json.RawMessage `json:"spec" jsonschema:"a flower-spec/v1 to check (docs/schemas/flower-spec-v1.schema.json)"`
	}
	renderInput struct {
		Spec json.RawMessage `json:"spec" jsonschema:"a flower-spec/v1 to draw (docs/schemas/flower-spec-v1.schema.json)"`
		View json.RawMessage `json:"view,omitempty" jsonschema:"a view/v1: palette and labels (docs/schemas/view-v1.schema.json); without it the signed-in person's view, or the default"`
	}
)

func (FiguresInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "sha256").Pattern = toolkit.Sha256Pattern
	toolkit.Property(s, "snapshot").Type = "object"
}

// A spec and a view are JSON objects; a client that types its arguments by
// the schema (the MCP Inspector's CLI) sends them as objects, not as text.
func (validateInput) RefineSchema(s *jsonschema.Schema) { toolkit.Property(s, "spec").Type = "object" }

func (renderInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "spec").Type = "object"
	toolkit.Property(s, "view").Type = "object"
}

func (ProposeInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "sha256").Pattern = toolkit.Sha256Pattern
	toolkit.Property(s, "intent").MaxLength = jsonschema.Ptr(MaxIntent)
}

// The answers' refinements: what a type cannot say about the JSON it writes.
func (FiguresResult) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "origin").Enum = []any{"this_site", "their_machine", "demo"}
	toolkit.Property(s, "origin").Description = "where the stored snapshot came from (none for one sent inline)"
	toolkit.Property(s, "demo").Description = demoDescription
	b := toolkit.Property(s, "banzhaf")
	b.Description = "the normalised Banzhaf index of the largest accounts in a vote of the whole reading's weight; null when nobody holds anything"
	toolkit.Property(b, "method").Enum = []any{"exact", "sampled"}
}

// A proposal's spec is flower-spec/v1, as published.
func (Proposal) RefineSchema(s *jsonschema.Schema) {
	var spec jsonschema.Schema
	if err := json.Unmarshal([]byte(specs.SpecJSONSchema), &spec); err != nil {
		panic("flowers: flower-spec/v1's schema: " + err.Error())
	}
	*toolkit.Property(s, "spec") = spec
	toolkit.Property(s, "demo").Description = demoDescription
}

func (Validation) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "demo").Description = demoDescription
}

func (Rendered) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "render_sha256").Description = "SHA-256 of the SVG's bytes"
	toolkit.Property(s, "demo").Description = demoDescription
}

const demoDescription = "true when the snapshot is the made-up demo reading"
