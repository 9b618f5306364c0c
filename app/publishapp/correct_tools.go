package publishapp

import (
	"context"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/corrections"
)

// correctionTools are prepare_correction and submit_correction: like
// publishing's, they act on the signed-in person's wallet and the chain, so
// they are refused on a public site and not offered to Petals' agent's model.
func (s *PublishService) correctionTools() []toolkit.Tool {
	return []toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name: ToolPrepareCorrection,
			Description: "Prepare a correction of a published flower, from the signed-in person's own wallet on the flower's network: say it is wrong (kind stale_reading | misleading_label | misassigned_group | other), why, and the evidence (what is wrong, what is right, up to 8 https links). " +
				"Answers the correction/v1 record (docs/schemas/correction-v1.schema.json) and the SocialDB set transaction their wallet signs and sends, writing it at <account>/petal/correction/<id>, with its quote. Nothing is kept or sent here; then submit_correction. A correction never changes the flower: get_flower shows it beside it.",
			OnTheirMachine: true,
			// As publishing's: the model has no wallet to sign with, and
			// every tool offered costs every call its description.
			HiddenFromAgent: true,
		}, func(ctx context.Context, call toolkit.Call, in prepareCorrectionInput) (PreparedCorrection, error) {
			return s.PrepareCorrection(ctx, call.Caller, CorrectionRequest{Flower: in.Flower, Kind: in.Kind, Reason: in.Reason,
				Evidence: corrections.Evidence(in.Evidence), Subject: in.Subject})
		}),
		toolkit.WithIO(toolkit.Tool{
			Name: ToolSubmitCorrection,
			Description: "Submit a correction once the person's wallet has sent the prepared transaction: by its tx_hash (its FINAL outcome must be a successful SocialDB set signed by one of the signed-in person's wallets), or by account_id and id. " +
				"The record is read back from SocialDB at finality final under the signer's account, checked as a correction/v1 of a flower kept here, made by that account, and kept. The same id again is the same answer. 404 while nothing is under the key yet.",
			OnTheirMachine:  true,
			HiddenFromAgent: true,
		}, func(ctx context.Context, call toolkit.Call, in submitCorrectionInput) (Correction, error) {
			return s.SubmitCorrection(ctx, call.Caller, SubmitInput(in))
		}),
	}
}

// The corrections tools' inputs.
type (
	prepareCorrectionInput struct {
		Flower   string        `json:"flower" jsonschema:"the id of the published flower that is wrong"`
		Kind     string        `json:"kind" jsonschema:"what is wrong: stale_reading, misleading_label, misassigned_group or other"`
		Reason   string        `json:"reason" jsonschema:"why, in your words: plain text on one line, at most 500 characters"`
		Evidence evidenceInput `json:"evidence" jsonschema:"what the flower says that is wrong, what is right, and links that show it"`
		Subject  string        `json:"subject,omitempty" jsonschema:"the account it is about, CAIP-10 (near:mainnet:alice.near), when it is about one petal"`
	}
	evidenceInput struct {
		Wrong string   `json:"wrong" jsonschema:"what the flower says that is wrong: plain text on one line, at most 500 characters"`
		Right string   `json:"right" jsonschema:"what is right: plain text on one line, at most 500 characters"`
		Links []string `json:"links,omitempty" jsonschema:"at most 8 https:// links that show it"`
	}
	submitCorrectionInput struct {
		Network   string `json:"network" jsonschema:"mainnet or testnet: the flower's"`
		TxHash    string `json:"tx_hash,omitempty" jsonschema:"the hash of the transaction the wallet sent (base58)"`
		AccountID string `json:"account_id,omitempty" jsonschema:"or the wallet that sent it: one of the signed-in person's"`
		ID        string `json:"id,omitempty" jsonschema:"and the correction's id, as prepare_correction answered it"`
	}
)

func (prepareCorrectionInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "flower").Pattern = toolkit.Sha256Pattern
	toolkit.Property(s, "kind").Enum = kindEnum()
	toolkit.Property(s, "reason").MaxLength = jsonschema.Ptr(corrections.MaxReason)
	toolkit.Property(s, "subject").MaxLength = jsonschema.Ptr(200)
	ev := toolkit.Property(s, "evidence")
	toolkit.Property(ev, "wrong").MaxLength = jsonschema.Ptr(corrections.MaxClaim)
	toolkit.Property(ev, "right").MaxLength = jsonschema.Ptr(corrections.MaxClaim)
	links := toolkit.Property(ev, "links")
	links.MaxItems = jsonschema.Ptr(corrections.MaxLinks)
	links.Items.MaxLength = jsonschema.Ptr(corrections.MaxLinkSize)
}

// A correction is submitted as a flower is: by its transaction, or its
// wallet and id.
func (submitCorrectionInput) RefineSchema(s *jsonschema.Schema) { publishFlowerInput{}.RefineSchema(s) }

// kindEnum is corrections.Kinds as a schema's enum.
func kindEnum() []any {
	kinds := make([]any, 0, len(corrections.Kinds))
	for _, k := range corrections.Kinds {
		kinds = append(kinds, k)
	}
	return kinds
}

// What the answers' types cannot say: the records are objects, the kinds
// are corrections.Kinds.
func (Correction) RefineSchema(s *jsonschema.Schema) {
	c := toolkit.Property(s, "correction")
	c.Type, c.Description = "object", "the correction/v1 record as published (docs/schemas/correction-v1.schema.json)"
	toolkit.Property(s, "kind").Enum = kindEnum()
	toolkit.Property(s, "flower").Description = "the id of the flower it corrects"
	toolkit.Property(s, "maker").Description = "who: the NEAR account that published it"
	toolkit.Property(s, "kept_at").Description = "when this site first kept it"
}

func (PreparedCorrection) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "correction").Type = "object"
}

func (FlowerAnswer) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "corrections").Description = "the newest corrections of the flower, at most 20"
	toolkit.Property(s, "corrections_count").Description = "how many corrections of it are kept here"
}
