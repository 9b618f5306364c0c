package specs

import (
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/petal-near/petal/domain/snapshots"
)

// Fixture snapshots, built in code so they are exact and need no canonical
// JSON: a spec names its snapshot by sha256, and these stand-ins are fixed.
const (
	daoSHA     = "1111111111111111111111111111111111111111111111111111111111111111"
	holdersSHA = "2222222222222222222222222222222222222222222222222222222222222222"
	equalSHA   = "3333333333333333333333333333333333333333333333333333333333333333"
	whaleSHA   = "4444444444444444444444444444444444444444444444444444444444444444"
)

// daoSnapshot is a small DAO with three roles and hostile names.
func daoSnapshot() *snapshots.Snapshot {
	acc := func(id, label, weight string, groups ...string) snapshots.Account {
		return snapshots.Account{ID: "near:mainnet:" + id, Label: label, Weight: weight, Groups: groups}
	}
	return &snapshots.Snapshot{
		Schema:  snapshots.Schema,
		Network: "near-dao-members",
		Chain:   "near:mainnet",
		Title:   "Members of example.sputnik-dao.near",
		Groups: []snapshots.Group{
			{ID: "council", Label: "Council"},
			{ID: "community", Label: "Community"},
			{ID: "bots", Label: "Bots & <tools>"},
		},
		Accounts: []snapshots.Account{
			acc("alice.near", "", "4200", "council"),
			acc("bob.near", "Bob", "3100", "council", "community"),
			acc("carol.near", "", "2600", "community"),
			acc("evil.near", "<script>alert(1)</script>", "1900", "community"),
			acc("dave.near", "", "1500", "community"),
			acc("erin.near", "Erin & \"friends\"", "1200", "council"),
			acc("frank.near", "", "900", "community"),
			acc("grace.near", "", "600", "bots"),
			acc("heidi.near", "a\x00b\x1bc", "450", "community"),
			acc("ivan.near", "", "300", "bots"),
			acc("judy.near", "", "150", "community"),
			acc("mallory.near", "", "0", "community"),
		},
	}
}

// holdersSnapshot is n token holders with a power-law tail (weights in
// yoctoNEAR-sized integers) spread over four groups.
func holdersSnapshot(n int) *snapshots.Snapshot {
	s := &snapshots.Snapshot{
		Schema:  snapshots.Schema,
		Network: "near-ft-holders",
		Chain:   "near:mainnet",
		Title:   fmt.Sprintf("Holders of token.example.near (%d accounts)", n),
		Groups: []snapshots.Group{
			{ID: "exchange", Label: "Exchanges"},
			{ID: "foundation", Label: "Foundation"},
			{ID: "validator", Label: "Validators"},
			{ID: "holder", Label: "Holders"},
		},
	}
	unit := new(big.Int).Exp(big.NewInt(10), big.NewInt(18), nil)
	for i := 1; i <= n; i++ {
		// Zipf-like: 10^6 / i^1.15, in whole millionths, times 10^18.
		w := big.NewInt(int64(math.Floor(1e6/math.Pow(float64(i), 1.15))) + int64(i%7))
		w.Mul(w, unit)
		group := "holder"
		switch {
		case i%17 == 3:
			group = "exchange"
		case i%29 == 1:
			group = "foundation"
		case i%11 == 5:
			group = "validator"
		}
		id := fmt.Sprintf("holder%05d.near", i)
		s.Accounts = append(s.Accounts, snapshots.Account{ID: "near:mainnet:" + id, Weight: w.String(), Groups: []string{group}})
	}
	return s
}

// equalSnapshot is eight accounts with equal weight and no groups.
func equalSnapshot() *snapshots.Snapshot {
	s := &snapshots.Snapshot{Schema: snapshots.Schema, Network: "near-dao-members", Title: "Eight equal members", Groups: []snapshots.Group{}}
	for i := range 8 {
		s.Accounts = append(s.Accounts, snapshots.Account{ID: fmt.Sprintf("near:mainnet:m%d.near", i), Weight: "1", Groups: []string{}})
	}
	return s
}

// whaleSnapshot is one huge account among 300 dust accounts.
func whaleSnapshot() *snapshots.Snapshot {
	s := &snapshots.Snapshot{Schema: snapshots.Schema, Network: "near-ft-holders", Title: "One whale among dust", Groups: []snapshots.Group{{ID: "whale", Label: "Whale"}, {ID: "dust", Label: "Dust"}}}
	s.Accounts = append(s.Accounts, snapshots.Account{ID: "near:mainnet:whale.near", Weight: "1" + strings.Repeat("0", 30), Groups: []string{"whale"}})
	for i := range 300 {
		s.Accounts = append(s.Accounts, snapshots.Account{ID: fmt.Sprintf("near:mainnet:dust%03d.near", i), Weight: fmt.Sprint(1000 + i), Groups: []string{"dust"}})
	}
	return s
}
