package maps

// ReadingSnapshots is a map's readings' snapshots, the newest first, at most
// limit (hidden maps' too: their readings are still read); ok is false for a
// map that isn't on the map.
func (x *Index) ReadingSnapshots(id string, limit int) (snapshots []string, ok bool) {
	c, found := x.byID[id]
	if !found {
		return nil, false
	}
	for _, r := range c.readings {
		if len(snapshots) == limit {
			break
		}
		snapshots = append(snapshots, r.Snapshot)
	}
	return snapshots, true
}
