package evm

import (
	"fmt"

	"github.com/petal-near/petal/domain/snapshots"
)

// Token is what an ERC-20 says of itself at the pinned block.
type Token struct {
	Name, Symbol string
	Decimals     int
	TotalSupply  Amount
}

// Label is how a reading names the token: its symbol, else its address.
func (t Token) Label(address Address) string {
	if t.Symbol != "" {
		return t.Symbol
	}
	return address.Hex()
}

// Tally is the groups and accounts of a reading, and its cut when it kept
// only the heaviest accounts.
type Tally struct {
	Groups   []snapshots.Group
	Accounts []snapshots.Account
	Cut      *snapshots.Cut
}

// TallyHoldings makes holdings, largest first, a reading of chain: each
// account weighed in whole tokens (its smallest units shifted by the token's
// decimals), all in one group. total is how many held something; when it is
// more than the holdings given, the reading says it was cut.
func TallyHoldings(chain string, held []Holding, total int, decimals int, group snapshots.Group) (Tally, error) {
	t := Tally{Groups: []snapshots.Group{group}, Accounts: make([]snapshots.Account, 0, len(held))}
	for _, h := range held {
		weight, err := snapshots.ShiftDecimal(h.Amount.String(), decimals)
		if err != nil {
			return Tally{}, fmt.Errorf("%s's amount: %w", h.Account.Hex(), err)
		}
		t.Accounts = append(t.Accounts, snapshots.Account{
			ID: AccountID(chain, h.Account), Label: h.Account.Hex(), Weight: weight, Groups: []string{group.ID},
		})
	}
	if total > len(held) {
		t.Cut = &snapshots.Cut{Total: total, Kept: len(held)}
	}
	return t, nil
}
