package publishapp

import (
	"context"
	"encoding/json"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/domain/published"
)

// Tools implements ToolSet: publishing (quote_payment, prepare_publish,
// publish_flower, refused on a public site, and not offered to Petals'
// agent's model, whose flower event carries prepare instead) and the
// published flowers (list_flowers, get_flower).
func (s *PublishService) Tools() []toolkit.Tool {
	return append([]toolkit.Tool{
		toolkit.WithIO(toolkit.Tool{
			Name:           ToolQuotePayment,
			Description:    "What publishing a flower to NEAR costs, asked dry: the storage deposit SocialDB charges for the record's bytes and its key (10^19 yoctoNEAR a byte) and the gas, with line items, in dollars at NEAR's price now (null when it can't be read). Nothing is kept or reserved by asking; a quote holds 10 minutes.",
			OnTheirMachine: true,
			// The agent offers publishing in its flower event (prepare);
			// its model has no use for these, and they would cost every call.
			HiddenFromAgent: true,
		}, func(ctx context.Context, call toolkit.Call, in quoteInput) (QuoteAnswer, error) {
			return s.Quote(ctx, call.Caller, PublishRequest(in))
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:           ToolPreparePublish,
			Description:    "Prepare a flower for publishing to NEAR from the signed-in person's own wallet: the flower/v1 record (docs/schemas/flower-v1.schema.json) and the SocialDB set transaction their wallet signs and sends, writing it at <account>/petal/flower/<id>, with its quote. The spec must be valid against a snapshot stored here. The server holds no key: nothing is sent until the wallet sends it; then publish_flower.",
			OnTheirMachine: true,
			// The agent offers publishing in its flower event (prepare);
			// its model has no use for these, and they would cost every call.
			HiddenFromAgent: true,
		}, func(ctx context.Context, call toolkit.Call, in prepareInput) (PreparedAnswer, error) {
			return s.Prepare(ctx, call.Caller, PublishRequest(in))
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:           ToolPublishFlower,
			Description:    "Publish a flower once the person's wallet has sent the prepared transaction: the record is read back from SocialDB at finality final under their account, checked byte for byte against what was prepared (or, prepared elsewhere, as a flower/v1 whose snapshot is stored here) and kept. The same id again is the same answer. 404 while nothing is under the key yet (the wallet may not have sent it).",
			OnTheirMachine: true,
			// The agent offers publishing in its flower event (prepare);
			// its model has no use for these, and they would cost every call.
			HiddenFromAgent: true,
		}, func(ctx context.Context, call toolkit.Call, in publishFlowerInput) (PublishedFlower, error) {
			return s.Publish(ctx, call.Caller, PublishInput(in))
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolListFlowers,
			Description: "Flowers published to NEAR, newest first, cursor-paged: each with its flower/v1 record, network, maker, map, status (ok, or snapshot_missing: not drawn here), where it opens (view_url) and its picture.",
		}, func(ctx context.Context, _ toolkit.Call, in listFlowersInput) (FlowerList, error) {
			return s.List(ctx, FlowerFilter(in))
		}),
		toolkit.WithIO(toolkit.Tool{
			Name:        ToolGetFlower,
			Description: "One flower published to NEAR, by its id: its flower/v1 record as published, network, maker, map, status, view_url and picture, and the corrections people published of it (who, when, what: newest first, at most 20, and their count). A correction never changes the flower.",
		}, func(ctx context.Context, _ toolkit.Call, in getFlowerInput) (FlowerAnswer, error) {
			return s.GetWithCorrections(ctx, in.ID)
		}),
	}, s.correctionTools()...)
}

// The publishing tools' inputs: each declared here and nowhere else.
type (
	quoteInput struct {
		Spec       json.RawMessage `json:"spec,omitempty" jsonschema:"the flower-spec/v1 to publish (docs/schemas/flower-spec-v1.schema.json)"`
		SpecSHA256 string          `json:"spec_sha256,omitempty" jsonschema:"or the name of a spec kept here"`
		Name       string          `json:"name,omitempty" jsonschema:"what to call the flower: plain text, at most 80 characters"`
		Network    string          `json:"network,omitempty" jsonschema:"mainnet or testnet; the signed-in wallet's network without it"`
	}
	prepareInput       quoteInput
	publishFlowerInput struct {
		Network   string `json:"network" jsonschema:"mainnet or testnet"`
		AccountID string `json:"account_id,omitempty" jsonschema:"the wallet that sent the transaction: one of the signed-in person's"`
		ID        string `json:"id,omitempty" jsonschema:"the flower's id, as prepare_publish answered it; or send tx_hash"`
		TxHash    string `json:"tx_hash,omitempty" jsonschema:"or the hash of the transaction the wallet sent (base58): the flower it wrote"`
	}
	listFlowersInput struct {
		Network string `json:"network,omitempty" jsonschema:"mainnet or testnet"`
		Maker   string `json:"maker,omitempty" jsonschema:"only this NEAR account's flowers"`
		Map     string `json:"map,omitempty" jsonschema:"only this map's flowers: <chain>:<address> or <chain>:population"`
		Limit   int    `json:"limit,omitempty" jsonschema:"how many, from 1 to 100 (20 without it)"`
		Cursor  string `json:"cursor,omitempty" jsonschema:"the next_cursor of the page before"`
	}
	getFlowerInput struct {
		ID string `json:"id" jsonschema:"the flower's id"`
	}
)

func refinePublishRequest(s *jsonschema.Schema) {
	toolkit.Property(s, "spec").Type = "object"
	toolkit.Property(s, "spec_sha256").Pattern = toolkit.Sha256Pattern
	toolkit.Property(s, "name").MaxLength = jsonschema.Ptr(published.MaxName)
	toolkit.Property(s, "network").Enum = []any{"mainnet", "testnet", "near:mainnet", "near:testnet"}
}

func (quoteInput) RefineSchema(s *jsonschema.Schema)   { refinePublishRequest(s) }
func (prepareInput) RefineSchema(s *jsonschema.Schema) { refinePublishRequest(s) }

func (publishFlowerInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "network").Enum = []any{"mainnet", "testnet", "near:mainnet", "near:testnet"}
	toolkit.Property(s, "account_id").MaxLength = jsonschema.Ptr(64)
	toolkit.Property(s, "id").Pattern = toolkit.Sha256Pattern
	toolkit.Property(s, "tx_hash").MaxLength = jsonschema.Ptr(64)
}

func (listFlowersInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "network").Enum = []any{"mainnet", "testnet", "near:mainnet", "near:testnet"}
	toolkit.Property(s, "maker").MaxLength = jsonschema.Ptr(64)
	toolkit.Property(s, "map").MaxLength = jsonschema.Ptr(200)
	limit := toolkit.Property(s, "limit")
	limit.Minimum, limit.Maximum = jsonschema.Ptr(1.0), jsonschema.Ptr(float64(published.MaxPage))
	toolkit.Property(s, "cursor").MaxLength = jsonschema.Ptr(400)
}

func (getFlowerInput) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "id").MaxLength = jsonschema.Ptr(64)
}

// What the answers' types cannot say: a published flower's status is one of
// two, and its record is a flower/v1 object.
func (PublishedFlower) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "status").Enum = []any{published.StatusOK, published.StatusSnapshotMissing}
	f := toolkit.Property(s, "flower")
	f.Type, f.Description = "object", "the flower/v1 record as published (docs/schemas/flower-v1.schema.json)"
}

func (PreparedAnswer) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "flower").Type = "object"
}

func (Quote) RefineSchema(s *jsonschema.Schema) {
	toolkit.Property(s, "receiver").Description = "the SocialDB contract"
	toolkit.Property(s, "usd").Description = "the deposit and the most the gas can cost, in dollars; null when NEAR's price can't be read"
}
