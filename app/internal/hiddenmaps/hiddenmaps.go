// Package hiddenmaps is the maps kept out of every list, shipped in petal: the
// map, relations, search and publishing all leave them out, so the file sits
// below all of them.
package hiddenmaps

import (
	_ "embed"

	"github.com/petal-near/petal/domain/maps"
)

// file is the maps kept out of every list (board #96): each with its reason
// and who decided. Taking a line out brings the map back.
//
//go:embed hidden-maps.json
var file []byte

// Load is the hidden maps' file, read and checked.
func Load() (map[string]maps.Hidden, error) { return maps.ParseHidden(file) }
