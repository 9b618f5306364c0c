package snapshots

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
)

// Tally is what a reader's rules make of what the contracts said: a reading's
// groups and accounts, and its detail when it keeps one.
type Tally struct {
	Groups   []Group
	Accounts []Account
	Detail   json.RawMessage
}

// TallyMembers makes a DAO's members a reading: one group per role, each
// account holding a role weighing 1, in account order. Accounts that are not
// NEAR account ids are left out.
func TallyMembers(chain string, roles []DAORole) Tally {
	t := Tally{Groups: []Group{}, Accounts: []Account{}}
	names := make([]string, len(roles))
	for i, r := range roles {
		names[i] = r.Name
	}
	ids := GroupIDs(names)
	byAccount := map[string][]string{}
	rolesOf := map[string][]string{}
	for i, r := range roles {
		t.Groups = append(t.Groups, Group{ID: ids[i], Label: Clip(names[i], MaxLabel)})
		for _, acct := range r.Members {
			if !slices.Contains(byAccount[acct], ids[i]) {
				byAccount[acct] = append(byAccount[acct], ids[i])
				rolesOf[acct] = append(rolesOf[acct], names[i])
			}
		}
	}
	accounts := make([]string, 0, len(byAccount))
	for a := range byAccount {
		if ValidNearAccount(a) {
			accounts = append(accounts, a)
		}
	}
	sort.Strings(accounts)
	for _, a := range accounts {
		t.Accounts = append(t.Accounts, Account{
			ID: AccountID(chain, a), Label: a, Weight: "1", Groups: byAccount[a],
			Attrs: RawAttrs(map[string]any{"roles": rolesOf[a]}),
		})
	}
	return t
}

// VoteGroups are the groups of a reading of votes.
var VoteGroups = []Group{{ID: "approve", Label: "Voted approve"}, {ID: "reject", Label: "Voted reject"}, {ID: "remove", Label: "Voted remove"}, {ID: "proposer", Label: "Made a proposal"}}

// TallyVotes makes a DAO's proposals a reading: each account weighs the votes
// it cast, grouped by how it voted and whether it proposed, with its votes by
// proposal id; every proposal is kept in the detail.
func TallyVotes(chain string, p Proposals) (Tally, error) {
	type tally struct {
		votes    map[string]int
		proposed int
		byID     map[string]string
	}
	tallies := map[string]*tally{}
	get := func(a string) *tally {
		if tallies[a] == nil {
			tallies[a] = &tally{votes: map[string]int{}, byID: map[string]string{}}
		}
		return tallies[a]
	}
	details := make([]Proposal, 0, len(p.List))
	for _, pr := range p.List {
		if pr.Votes == nil {
			pr.Votes = map[string]string{}
		}
		details = append(details, pr)
		if ValidNearAccount(pr.Proposer) {
			get(pr.Proposer).proposed++
		}
		for voter, vote := range pr.Votes {
			if !ValidNearAccount(voter) {
				continue
			}
			t := get(voter)
			t.votes[strings.ToLower(vote)]++
			t.byID[fmt.Sprint(pr.ID)] = vote
		}
	}
	out := Tally{Groups: slices.Clone(VoteGroups), Accounts: []Account{}}
	names := make([]string, 0, len(tallies))
	for a := range tallies {
		names = append(names, a)
	}
	sort.Strings(names)
	for _, a := range names {
		t := tallies[a]
		cast := 0
		var groups []string
		for _, g := range []string{"approve", "reject", "remove"} {
			if t.votes[g] > 0 {
				groups = append(groups, g)
			}
			cast += t.votes[g]
		}
		if t.proposed > 0 {
			groups = append(groups, "proposer")
		}
		if groups == nil {
			groups = []string{}
		}
		out.Accounts = append(out.Accounts, Account{
			ID: AccountID(chain, a), Label: a, Weight: fmt.Sprint(cast), Groups: groups,
			Attrs: RawAttrs(map[string]any{"approve": t.votes["approve"], "reject": t.votes["reject"], "remove": t.votes["remove"], "proposed": t.proposed, "votes": t.byID}),
		})
	}
	kept := map[string]any{"proposals": details, "last_proposal_id": p.Last}
	if p.ProposalPeriod != "" {
		kept["proposal_period"] = p.ProposalPeriod
	}
	detail, err := json.Marshal(kept)
	if err != nil {
		return Tally{}, fmt.Errorf("the proposals could not be kept: %w", err)
	}
	out.Detail = detail
	return out, nil
}

// DelegatorGroups are the groups of a reading of a staking pool.
var DelegatorGroups = []Group{{ID: "staking", Label: "Staking"}, {ID: "unstaking", Label: "Also unstaking"}}

// TallyDelegators makes a pool's delegations a reading: each account with
// NEAR staked weighs its staked NEAR; one that is only withdrawing is not a
// delegator. An amount that is not a whole number of yoctoNEAR is an error.
func TallyDelegators(chain string, ds []Delegation) (Tally, error) {
	t := Tally{Groups: slices.Clone(DelegatorGroups), Accounts: []Account{}}
	for _, d := range ds {
		staked, err := ShiftDecimal(d.StakedYocto, NearDecimals)
		if err != nil {
			return Tally{}, fmt.Errorf("%s's stake: %w", d.Account, err)
		}
		if staked == "0" || !ValidNearAccount(d.Account) {
			continue
		}
		groups := []string{"staking"}
		if strings.TrimLeft(d.UnstakedYocto, "0") != "" {
			groups = append(groups, "unstaking")
		}
		t.Accounts = append(t.Accounts, Account{
			ID: AccountID(chain, d.Account), Label: d.Account, Weight: staked, Groups: groups,
			Attrs: RawAttrs(map[string]any{"staked_yocto": d.StakedYocto, "unstaked_yocto": d.UnstakedYocto, "can_withdraw": d.CanWithdraw}),
		})
	}
	return t, nil
}

// TallyBalances makes one token's balances a reading: accounts[i] holds
// amounts[i] of the token's smallest units, weighed in whole tokens, in the
// order given, grouped by whether it holds any.
func TallyBalances(chain string, accounts, amounts []string, token Token, symbol string) (Tally, error) {
	if len(amounts) != len(accounts) {
		return Tally{}, fmt.Errorf("%d balances for %d accounts", len(amounts), len(accounts))
	}
	t := Tally{
		Groups:   []Group{{ID: "holders", Label: Clip("Holds "+symbol, MaxLabel)}, {ID: "none", Label: "Holds none"}},
		Accounts: []Account{},
	}
	for i, a := range accounts {
		balance, err := ShiftDecimal(amounts[i], token.Decimals)
		if err != nil {
			return Tally{}, fmt.Errorf("%s's balance: %w", a, err)
		}
		group := "holders"
		if balance == "0" {
			group = "none"
		}
		t.Accounts = append(t.Accounts, Account{ID: AccountID(chain, a), Label: a, Weight: balance, Groups: []string{group}})
	}
	return t, nil
}

// Clip cuts what a contract says (a DAO's purpose, a role's name, a token's
// symbol) to a snapshot's bounds, on a character boundary, marking the cut.
func Clip(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	return string(r[:max-1]) + "…"
}

var nonGroupID = regexp.MustCompile(`[^a-z0-9_.:-]+`)

// GroupIDs gives each role name a group id (lower case, safe characters),
// distinct even when two names slug the same.
func GroupIDs(names []string) []string {
	ids := make([]string, len(names))
	used := map[string]bool{}
	for i, n := range names {
		id := strings.Trim(nonGroupID.ReplaceAllString(strings.ToLower(n), "-"), "-_.:")
		if id == "" {
			id = "role"
		}
		if len(id) > 60 {
			id = id[:60]
		}
		base := id
		for k := 2; used[id]; k++ {
			id = fmt.Sprintf("%s-%d", base, k)
		}
		used[id] = true
		ids[i] = id
	}
	return ids
}
