package runs

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// SummaryMax bounds a tool_result summary, in characters.
const SummaryMax = 280

// Summarize says in one line what a tool answered, for the tool_result event.
// It names scalar fields and counts lists, so a snapshot's accounts (or any
// other body) never travel in the event: a summary, never a raw body. A tool
// that answers its own "summary" field is taken at its word.
func Summarize(out json.RawMessage) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(out, &obj); err != nil {
		var list []json.RawMessage
		if json.Unmarshal(out, &list) == nil {
			return fmt.Sprintf("%d items", len(list))
		}
		return clip(strings.TrimSpace(string(out)))
	}
	if raw, ok := obj["summary"]; ok {
		var s string
		if json.Unmarshal(raw, &s) == nil && s != "" {
			return clip(s)
		}
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if k != "tools_version" {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		raw := obj[k]
		var v any
		if json.Unmarshal(raw, &v) != nil {
			continue
		}
		switch x := v.(type) {
		case string:
			if utf8.RuneCountInString(x) > 80 {
				continue // a long string is a body, not a fact
			}
			parts = append(parts, fmt.Sprintf("%s: %s", k, x))
		case float64, bool:
			parts = append(parts, fmt.Sprintf("%s: %s", k, string(raw)))
		case []any:
			parts = append(parts, fmt.Sprintf("%s: %d", k, len(x)))
		}
	}
	if len(parts) == 0 {
		return "answered"
	}
	return clip(strings.Join(parts, ", "))
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= SummaryMax {
		return s
	}
	r := []rune(s)
	return string(r[:SummaryMax-1]) + "…"
}
