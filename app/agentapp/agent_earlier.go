package agentapp

import (
	"context"
	"encoding/json"
	"fmt"
	"time"
)

// EarlierReadings finds the reading on the map before a snapshot the agent
// just read (mapsapp.MapService, wired in cmd): the same map by the same
// reader at an earlier block.
type EarlierReadings interface {
	EarlierReading(ctx context.Context, sha string) (mapID, earlier string, asOf time.Time, ok bool, err error)
}

// SetEarlierReadings has get_snapshot's answers, as the model reads them,
// say when the target's map has an earlier reading (nil: never).
func (a *AgentService) SetEarlierReadings(e EarlierReadings) { a.earlier = e }

// earlierLookup bounds finding the earlier reading, which a round waits on.
const earlierLookup = 5 * time.Second

// earlierReading is what get_snapshot's answer carries for the model.
type earlierReading struct {
	Map      string `json:"map"`
	Snapshot string `json:"snapshot"`
	AsOf     string `json:"as_of"`
	Note     string `json:"note"`
}

// withEarlierReading adds earlier_reading to get_snapshot's answer when the
// map it reads has an earlier reading, so the agent can say "since the last
// reading, …" with compare_figures' answer; the answer as it was otherwise,
// or when the lookup fails (logged: the reading itself is fine).
func (a *AgentService) withEarlierReading(ctx context.Context, content []byte) []byte {
	if a.earlier == nil {
		return content
	}
	var m map[string]json.RawMessage
	var sha string
	if json.Unmarshal(content, &m) != nil || json.Unmarshal(m["sha256"], &sha) != nil || sha == "" {
		return content
	}
	lctx, cancel := context.WithTimeout(ctx, earlierLookup)
	defer cancel()
	mapID, earlier, asOf, ok, err := a.earlier.EarlierReading(lctx, sha)
	if err != nil {
		a.log.Warn("agent: the map's earlier reading could not be looked up", "snapshot", sha, "err", err)
		return content
	}
	if !ok {
		return content
	}
	e, _ := json.Marshal(earlierReading{Map: mapID, Snapshot: earlier, AsOf: asOf.UTC().Format(time.RFC3339),
		Note: fmt.Sprintf(`The map %s has an earlier reading of this target, as of %s. compare_figures {"a":"%s","b":"%s"} (more_tools brings it) says what changed since then: tell the person "since the last reading, …".`,
			mapID, asOf.UTC().Format("2 Jan 2006"), earlier, sha)})
	m["earlier_reading"] = e
	out, err := json.Marshal(m)
	if err != nil {
		return content
	}
	return out
}
