// Package snapshots is a reading of a network: who held what at one block,
// format snapshot/v1, named by the SHA-256 of its canonical JSON (RFC 8785).
package snapshots

import (
	"encoding/json"

	"github.com/petal-near/petal/domain/canon"
)

// Schema is the format id every snapshot carries.
const Schema = "snapshot/v1"

// MaxAccounts bounds a snapshot; a reader past it keeps the top accounts and
// says it was cut.
const MaxAccounts = 100_000

// Snapshot is one reading. Weights are exact decimal strings in the token's own
// units, never floats.
type Snapshot struct {
	Schema   string          `json:"schema"`
	Network  string          `json:"network"` // the reader's id, e.g. near-dao-members
	Params   json.RawMessage `json:"params"`
	Chain    string          `json:"chain"` // near:mainnet or near:testnet
	Block    Block           `json:"block"`
	Title    string          `json:"title"`
	About    string          `json:"about"`
	Groups   []Group         `json:"groups"`
	Accounts []Account       `json:"accounts"`
	Source   Source          `json:"source"`
	// Detail is what a reader keeps about the reading as a whole beyond its
	// accounts, such as the proposals a DAO reading read.
	Detail json.RawMessage `json:"detail,omitempty"`
}

// Block is where on the chain the reading was taken.
type Block struct {
	Height uint64 `json:"height"`
	Hash   string `json:"hash"`
	Time   string `json:"time"` // RFC 3339, UTC
}

// Group is a colour of petals: a role, a vote, a kind of holder.
type Group struct {
	ID    string `json:"id"`
	Label string `json:"label"`
}

// Account is one petal.
type Account struct {
	ID     string   `json:"id"` // CAIP-10: near:mainnet:alice.near
	Label  string   `json:"label"`
	Weight string   `json:"weight"` // exact non-negative decimal
	Groups []string `json:"groups"`
	// Attrs is what a reader keeps about one account beyond its weight (a
	// member's roles, a voter's votes): a non-empty JSON object, kept as the
	// raw JSON it came as and never decoded into maps, so a posted reading
	// costs its bytes and no more.
	Attrs json.RawMessage `json:"attrs,omitempty"`
}

// Source says which contract calls made the reading, and whether it was cut.
type Source struct {
	Calls []Call `json:"calls"`
	// Cut is set when the reader kept only the top MaxAccounts accounts.
	Cut *Cut `json:"cut,omitempty"`
}

// Call is one contract call a reader made.
type Call struct {
	Contract string `json:"contract"`
	Method   string `json:"method"`
	Args     string `json:"args,omitempty"` // the call's JSON arguments, as sent
	Pages    int    `json:"pages,omitempty"`
}

// Cut records that a reading kept only its top accounts.
type Cut struct {
	Total int `json:"total"`
	Kept  int `json:"kept"`
}

// RawAttrs is a reader's attrs for one account as canonical JSON. It is for
// values petal's own readers build; it panics on a value JSON can't hold,
// which would be a bug in the reader.
func RawAttrs(v any) json.RawMessage {
	b, err := canon.Marshal(v)
	if err != nil {
		panic("snapshots: attrs that JSON can't hold: " + err.Error())
	}
	return b
}
