// Package datasets is layers and dataset versions (docs/annotations.md):
// a layer (layer/v1) is a set of annotations about accounts, kept under the
// project's owner, read against one snapshot; a dataset version (dataset/v1)
// is a snapshot-like list of accounts, derived from a snapshot with accounts
// added or dropped, named by the SHA-256 of its canonical JSON and naming its
// parent. A version holds only its change from its parent, so it stays small
// however large the snapshot.
package datasets

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/canon"
	"github.com/petal-near/petal/domain/claims"
	"github.com/petal-near/petal/domain/errs"
)

// Formats.
const (
	LayerSchema   = "layer/v1"
	DatasetSchema = "dataset/v1"
)

// Limits (docs/annotations.md).
const (
	MaxChange     = 1000 // accounts added, and dropped, by one version
	MaxDepth      = 64   // versions between a version and its snapshot
	MaxTitleChars = 200
	MaxPerProject = 1000 // layers, and versions, kept in one project
)

// Layer is one layer/v1.
type Layer struct {
	Schema   string   `json:"schema"`
	About    string   `json:"about"`    // the address the layer is about (CAIP-10)
	Snapshot string   `json:"snapshot"` // the reading it is read against
	Title    string   `json:"title"`
	Claims   []string `json:"claims"` // its annotations' ids, in the order sent
}

// Version is one dataset/v1.
type Version struct {
	Schema   string   `json:"schema"`
	About    string   `json:"about"`
	Snapshot string   `json:"snapshot"` // the reading the versions descend from
	Parent   *string  `json:"parent"`   // the version it was made from; null: the snapshot itself
	Layer    *string  `json:"layer"`    // the layer that made it; null for a fork
	Add      []string `json:"add"`      // sorted, each once
	Drop     []string `json:"drop"`     // sorted, each once
}

// Name is a document's name: the SHA-256 of its canonical JSON.
func Name(v any) (string, error) {
	h, _, err := canon.SHA256Hex(v)
	if err != nil {
		return "", errs.New(errs.Internal, "a dataset document could not be named").WithCause(err)
	}
	return h, nil
}

// NewLayer checks and makes a layer.
func NewLayer(about, snapshot, title string, claimIDs []string) (Layer, error) {
	if !claims.ValidCAIP10(about) {
		return Layer{}, errs.New(errs.BadInput, "about must be an account id (CAIP-10)", "the address the layer is about, such as near:mainnet:marketing.sputnik-dao.near")
	}
	title = strings.TrimSpace(title)
	if n := utf8.RuneCountInString(title); n > MaxTitleChars {
		return Layer{}, errs.Newf(errs.BadInput, "title is %d characters; at most %d", n, MaxTitleChars)
	}
	return Layer{Schema: LayerSchema, About: about, Snapshot: snapshot, Title: title, Claims: claimIDs}, nil
}

// LayerVersion is the version a layer makes: its snapshot with the accounts
// its claims speak of that the snapshot doesn't hold added.
func LayerVersion(l Layer, layerHash string, subjects []string, inSnapshot func(string) bool) (Version, error) {
	var add []string
	for _, s := range subjects {
		if !inSnapshot(s) {
			add = append(add, s)
		}
	}
	add = sortedOnce(add)
	if len(add) > MaxChange {
		return Version{}, errs.Newf(errs.BadInput, "the layer adds %d accounts to its snapshot; at most %d", len(add), MaxChange)
	}
	return Version{Schema: DatasetSchema, About: l.About, Snapshot: l.Snapshot, Layer: &layerHash, Add: add, Drop: []string{}}, nil
}

// Fork is a version made from parent (named parentHash) with accounts added
// and dropped. has says whether the parent's list holds an account; an add
// it holds, or a drop it doesn't, is bad_input naming it.
func Fork(parent Version, parentHash string, add, drop []string, has func(string) bool) (Version, error) {
	if len(add) == 0 && len(drop) == 0 {
		return Version{}, errs.New(errs.BadInput, "a fork needs add or drop", "name the accounts to add to the version, or drop from it")
	}
	for field, list := range map[string][]string{"add": add, "drop": drop} {
		if len(list) > MaxChange {
			return Version{}, errs.Newf(errs.BadInput, "%s holds %d accounts; at most %d", field, len(list), MaxChange)
		}
		for i, a := range list {
			if !claims.ValidCAIP10(a) {
				return Version{}, errs.Newf(errs.BadInput, "%s/%d must be an account id (CAIP-10)", field, i)
			}
		}
	}
	add, drop = sortedOnce(add), sortedOnce(drop)
	for _, a := range add {
		if slices.Contains(drop, a) {
			return Version{}, errs.Newf(errs.BadInput, "%s is both added and dropped", a)
		}
		if has(a) {
			return Version{}, errs.Newf(errs.BadInput, "add: the version already holds %s", a)
		}
	}
	for _, a := range drop {
		if !has(a) {
			return Version{}, errs.Newf(errs.BadInput, "drop: the version doesn't hold %s", a)
		}
	}
	return Version{Schema: DatasetSchema, About: parent.About, Snapshot: parent.Snapshot, Parent: &parentHash, Add: add, Drop: drop}, nil
}

// Holds says whether the list a chain of versions makes holds account: the
// chain is the version first, then its parent, … to the last before the
// snapshot; inSnapshot reads the snapshot.
func Holds(chain []Version, inSnapshot func(string) bool) func(string) bool {
	return func(account string) bool {
		for _, v := range chain {
			if _, ok := slices.BinarySearch(v.Add, account); ok {
				return true
			}
			if _, ok := slices.BinarySearch(v.Drop, account); ok {
				return false
			}
		}
		return inSnapshot(account)
	}
}

// Count is how many accounts the chain's list holds, given the snapshot's.
func Count(chain []Version, snapshotAccounts []string) int {
	in := map[string]bool{}
	for _, a := range snapshotAccounts {
		in[a] = true
	}
	for i := len(chain) - 1; i >= 0; i-- {
		for _, a := range chain[i].Add {
			in[a] = true
		}
		for _, a := range chain[i].Drop {
			delete(in, a)
		}
	}
	return len(in)
}

func sortedOnce(xs []string) []string {
	out := slices.Clone(xs)
	slices.Sort(out)
	out = slices.Compact(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// Decode reads a kept document.
func Decode[T Layer | Version](raw []byte) (T, error) {
	var v T
	if err := json.Unmarshal(raw, &v); err != nil {
		return v, fmt.Errorf("datasets: a kept document could not be read: %w", err)
	}
	return v, nil
}
