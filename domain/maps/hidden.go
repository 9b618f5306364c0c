package maps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"
)

// Bounds on a hidden map's entry, in characters.
const (
	MaxHiddenWhy     = 1000
	MaxHiddenDecided = 200
)

// HiddenEntry is one line of the hidden maps' file.
type HiddenEntry struct {
	Map     string `json:"map"`
	Why     string `json:"why"`
	Decided string `json:"decided"`
}

// ParseHidden reads the hidden maps' file: a JSON array of { map, why,
// decided }, each map an id in its one form, listed once, with a reason and
// who decided. Anything else is an error naming the entry, so a bad file
// stops petal at start rather than showing a map someone meant to hide.
func ParseHidden(raw []byte) (map[string]Hidden, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var entries []HiddenEntry
	if err := dec.Decode(&entries); err != nil {
		return nil, fmt.Errorf("hidden maps: not an array of { map, why, decided }: %w", err)
	}
	if dec.More() {
		return nil, fmt.Errorf("hidden maps: data after the array")
	}
	out := make(map[string]Hidden, len(entries))
	for i, e := range entries {
		at := fmt.Sprintf("hidden maps: entry %d", i)
		if _, _, ok := SplitID(e.Map); !ok || NormaliseID(e.Map) != e.Map || strings.TrimSpace(e.Map) != e.Map {
			return nil, fmt.Errorf("%s: map %q is not a map id in its one form (<chain>:<address>, an EVM address in lower case, or <chain>:population)", at, e.Map)
		}
		if _, dup := out[e.Map]; dup {
			return nil, fmt.Errorf("%s: map %s is listed twice", at, e.Map)
		}
		if strings.TrimSpace(e.Why) == "" || utf8.RuneCountInString(e.Why) > MaxHiddenWhy {
			return nil, fmt.Errorf("%s (%s): why must say the reason, in 1 to %d characters", at, e.Map, MaxHiddenWhy)
		}
		if strings.TrimSpace(e.Decided) == "" || utf8.RuneCountInString(e.Decided) > MaxHiddenDecided {
			return nil, fmt.Errorf("%s (%s): decided must say who decided (and when), in 1 to %d characters", at, e.Map, MaxHiddenDecided)
		}
		out[e.Map] = Hidden{Why: e.Why, Decided: e.Decided}
	}
	return out, nil
}
