package evm

import (
	"errors"
	"fmt"
	"slices"
)

// ErrLogsDontAddUp is the cause of every refusal of a token whose logs can't
// be its balances or votes (a rebasing or fee-on-transfer token, one that
// mints without a Transfer event, a read that started after the token did).
var ErrLogsDontAddUp = errors.New("the token's logs don't add up")

// ErrTooManyHolders is the cause of a refusal past a ledger's cap.
var ErrTooManyHolders = errors.New("more holders than a reading keeps")

// Transfer is one ERC-20 Transfer log: Value of the token's smallest units
// from From to To. A mint comes from the zero address, a burn goes to it.
type Transfer struct {
	From, To Address
	Value    Amount
	Block    uint64
}

// VotesChanged is one ERC20Votes DelegateVotesChanged log: Delegate's voting
// power went from Previous to Now.
type VotesChanged struct {
	Delegate      Address
	Previous, Now Amount
	Block         uint64
}

// Ledger keeps what an account holds, applying logs in chain order. Only
// accounts holding something are kept (an account emptied is dropped), so
// its size is the holders now, and it refuses to keep more than its cap.
type Ledger struct {
	held   map[Address]Amount
	supply Amount // minted less burned
	max    int
	logs   int
}

// NewLedger keeps at most maxHolders accounts at once.
func NewLedger(maxHolders int) *Ledger {
	return &Ledger{held: make(map[Address]Amount), max: maxHolders}
}

// Holders is how many accounts hold something now.
func (l *Ledger) Holders() int { return len(l.held) }

// Logs is how many logs were applied.
func (l *Ledger) Logs() int { return l.logs }

// Supply is what the logs minted less what they burned.
func (l *Ledger) Supply() Amount { return l.supply }

// Of is what a holds by the logs.
func (l *Ledger) Of(a Address) Amount { return l.held[a] }

// ApplyTransfer moves t.Value from t.From to t.To. A sender that sends more
// than its logs gave it, or a supply past 256 bits, is ErrLogsDontAddUp.
func (l *Ledger) ApplyTransfer(t Transfer) error {
	l.logs++
	if t.Value.IsZero() {
		return nil
	}
	if t.From.IsZero() {
		s, over := l.supply.Add(t.Value)
		if over {
			return fmt.Errorf("%w: the mint at block %d takes the supply past 2^256", ErrLogsDontAddUp, t.Block)
		}
		l.supply = s
	} else {
		left, short := l.held[t.From].Sub(t.Value)
		if short {
			return fmt.Errorf("%w: %s sends %s at block %d but its Transfer logs gave it %s", ErrLogsDontAddUp,
				t.From.Hex(), t.Value, t.Block, l.held[t.From])
		}
		l.set(t.From, left)
	}
	if t.To.IsZero() {
		// The sender held it, so the supply did.
		l.supply, _ = l.supply.Sub(t.Value)
		return nil
	}
	// No balance can pass the supply, which fits.
	got, _ := l.held[t.To].Add(t.Value)
	return l.setChecked(t.To, got)
}

// ApplyVotes sets v.Delegate's voting power to v.Now, after checking that the
// logs before gave it v.Previous.
func (l *Ledger) ApplyVotes(v VotesChanged) error {
	l.logs++
	if had := l.held[v.Delegate]; had != v.Previous {
		return fmt.Errorf("%w: %s's votes change from %s at block %d but its earlier logs gave it %s", ErrLogsDontAddUp,
			v.Delegate.Hex(), v.Previous, v.Block, had)
	}
	s, _ := l.supply.Sub(v.Previous)
	s, over := s.Add(v.Now)
	if over {
		return fmt.Errorf("%w: the votes at block %d pass 2^256", ErrLogsDontAddUp, v.Block)
	}
	l.supply = s
	return l.setChecked(v.Delegate, v.Now)
}

func (l *Ledger) set(a Address, v Amount) {
	if v.IsZero() {
		delete(l.held, a)
		return
	}
	l.held[a] = v
}

func (l *Ledger) setChecked(a Address, v Amount) error {
	if _, kept := l.held[a]; !kept && !v.IsZero() && len(l.held) >= l.max {
		return fmt.Errorf("%w: over %d accounts hold some at once", ErrTooManyHolders, l.max)
	}
	l.set(a, v)
	return nil
}

// Holding is one account and what it holds.
type Holding struct {
	Account Address
	Amount  Amount
}

// Top is the n largest holdings, largest first (ties by address), all of
// them when there are fewer.
func (l *Ledger) Top(n int) []Holding {
	all := make([]Holding, 0, len(l.held))
	for a, v := range l.held {
		all = append(all, Holding{a, v})
	}
	slices.SortFunc(all, func(x, y Holding) int {
		if c := y.Amount.Cmp(x.Amount); c != 0 {
			return c
		}
		return slices.Compare(x.Account[:], y.Account[:])
	})
	if len(all) > n {
		all = slices.Clip(all[:n])
	}
	return all
}

// CheckSupply compares the logs' supply with what totalSupply says at the
// same block.
func (l *Ledger) CheckSupply(totalSupply Amount) error {
	if l.supply != totalSupply {
		return fmt.Errorf("%w: its Transfer logs mint %s less burns, but totalSupply says %s", ErrLogsDontAddUp, l.supply, totalSupply)
	}
	return nil
}

// CheckVotesWithin checks that the delegates' votes together are no more
// than the supply (each token votes once at most).
func (l *Ledger) CheckVotesWithin(totalSupply Amount) error {
	if l.supply.Cmp(totalSupply) > 0 {
		return fmt.Errorf("%w: its delegates' votes add up to %s, more than its totalSupply %s", ErrLogsDontAddUp, l.supply, totalSupply)
	}
	return nil
}

// CheckHoldings compares holdings from the logs with what the token itself
// says of the same accounts at the same block (balanceOf, getVotes), in
// order; what names what was read ("balanceOf").
func CheckHoldings(held []Holding, said []Amount, what string) error {
	if len(said) != len(held) {
		return fmt.Errorf("%d answers of %s for %d accounts", len(said), what, len(held))
	}
	for i, h := range held {
		if said[i] != h.Amount {
			return fmt.Errorf("%w: %s holds %s by %s but %s by its logs", ErrLogsDontAddUp, h.Account.Hex(), said[i], what, h.Amount)
		}
	}
	return nil
}
