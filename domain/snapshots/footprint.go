package snapshots

// Footprint estimates the bytes a decoded snapshot holds in memory, erring
// high: its texts and raw JSON, plus what Go spends on each value's header
// and allocation. It is what a cache bounded in bytes counts.
func Footprint(s *Snapshot) int {
	const (
		stringCost  = 16 + 8 // a header, and the rounding of a small allocation
		sliceCost   = 24 + 8
		accountCost = 4*16 + 2*24 // Account's fields
	)
	n := 512 + len(s.Schema) + len(s.Network) + len(s.Params) + len(s.Chain) + len(s.Block.Hash) + len(s.Block.Time) +
		len(s.Title) + len(s.About) + len(s.Detail)
	for _, g := range s.Groups {
		n += 2*stringCost + len(g.ID) + len(g.Label)
	}
	for _, c := range s.Source.Calls {
		n += 3*stringCost + 8 + len(c.Contract) + len(c.Method) + len(c.Args)
	}
	for i := range s.Accounts {
		a := &s.Accounts[i]
		n += accountCost + 3*8 + len(a.ID) + len(a.Label) + len(a.Weight) + len(a.Attrs) + sliceCost
		for _, g := range a.Groups {
			n += stringCost + len(g)
		}
	}
	return n
}
