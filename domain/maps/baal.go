package maps

import (
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/petal-near/petal/domain/evm"
	"github.com/petal-near/petal/domain/snapshots"
)

// BaalProposalsNetwork is the reader of a Baal's proposals and votes.
const BaalProposalsNetwork = "evm-baal-proposals"

// isProposalsNetwork is whether a reader's readings give a map's proposals.
func isProposalsNetwork(network string) bool {
	return network == ProposalsNetwork || network == BaalProposalsNetwork
}

// BaalProposalRecords makes proposals/v2 records of a Baal's events, read in
// chain order up to a block of time now (Unix seconds): every vote's time,
// closes_at from when its vote starts (its sponsoring, or its submission when
// self-sponsored) plus the voting period then, decided_at from its processing
// or cancelling, the proposer the submission's sender. decimals are the
// shares token's, a vote's power in whole shares. The newest first.
func BaalProposalRecords(chain string, dao evm.Address, events []evm.BaalEvent, now int64, decimals int) ([]ProposalRecord, error) {
	type prop struct {
		rec               ProposalRecord
		ends, graceEnds   int64
		yes, no           evm.Amount
		expiration        uint64
		processed, passed bool
		failed, cancelled bool
		decided           int64
	}
	var voting, grace uint64
	byID := map[uint64]*prop{}
	var order []uint64
	start := func(p *prop, at uint64) {
		p.ends = int64(at + voting)
		p.graceEnds = p.ends + int64(grace)
		p.rec.ClosesAt = unixTime(p.ends)
	}
	for _, e := range events {
		if e.Kind == evm.BaalConfig {
			if e.VotingPeriod != 0 {
				voting = e.VotingPeriod
			}
			if e.Grace != 0 {
				grace = e.Grace
			}
			continue
		}
		p := byID[e.Proposal]
		if e.Kind == evm.BaalSubmit {
			if p != nil {
				return nil, fmt.Errorf("proposal %d submitted twice", e.Proposal)
			}
			if voting == 0 {
				voting = e.VotingPeriod // a Baal read from after its set-up
			}
			title, kind := baalTitle(e)
			proposer := evm.AccountID(chain, e.Account)
			p = &prop{rec: ProposalRecord{
				ID: strconv.FormatUint(e.Proposal, 10), Title: title, Kind: kind, Proposer: &proposer, At: unixTime(e.Time),
				Ref: fmt.Sprintf("%s:%s/proposals/%d", chain, dao.Hex(), e.Proposal), Votes: []VoteRecord{},
			}, expiration: e.Expiration}
			if e.SelfSponsor {
				start(p, e.VotingStarts)
			}
			byID[e.Proposal] = p
			order = append(order, e.Proposal)
			continue
		}
		if p == nil {
			return nil, fmt.Errorf("a %s of proposal %d, never submitted", e.Kind, e.Proposal)
		}
		switch e.Kind {
		case evm.BaalSponsor:
			start(p, e.VotingStarts)
		case evm.BaalVote:
			power, err := snapshots.ShiftDecimal(e.Amount.String(), decimals)
			if err != nil {
				return nil, err
			}
			vote, said := "against", "no"
			var overflow bool
			if e.Approved {
				vote, said = "for", "yes"
				p.yes, overflow = p.yes.Add(e.Amount)
			} else {
				p.no, overflow = p.no.Add(e.Amount)
			}
			if overflow {
				return nil, fmt.Errorf("proposal %d's votes overflow", e.Proposal)
			}
			p.rec.Votes = append(p.rec.Votes, VoteRecord{Account: evm.AccountID(chain, e.Account), Vote: &vote, AsSaid: said,
				At: unixTime(e.Time), Choices: []Choice{{Choice: said, Weight: power}}, Power: &power})
		case evm.BaalProcess:
			p.processed, p.passed, p.failed, p.decided = true, e.Passed, e.ActionFailed, e.Time
		case evm.BaalCancel:
			p.cancelled, p.decided = true, e.Time
		}
	}
	out := make([]ProposalRecord, 0, len(order))
	for _, id := range slices.Backward(order) {
		p := byID[id]
		switch {
		case p.cancelled:
			p.rec.Outcome, p.rec.AsSaid = "removed", "Cancelled"
		case p.processed && p.passed && p.failed:
			p.rec.Outcome, p.rec.AsSaid = "failed", "Processed"
		case p.processed && p.passed:
			p.rec.Outcome, p.rec.AsSaid = "approved", "Processed"
		case p.processed && p.expiration != 0 && int64(p.expiration) < p.decided:
			p.rec.Outcome, p.rec.AsSaid = "expired", "Processed"
		case p.processed:
			p.rec.Outcome, p.rec.AsSaid = "rejected", "Processed"
		case p.rec.ClosesAt == nil && p.expiration != 0 && now >= int64(p.expiration):
			// Never sponsored, and now it never can be: sponsoring needs its
			// expiration after the vote's window, and that is past.
			p.rec.Outcome, p.rec.AsSaid = "expired", "Submitted"
		case p.rec.ClosesAt == nil:
			p.rec.Outcome, p.rec.AsSaid = "open", "Submitted"
		case now <= p.ends:
			p.rec.Outcome, p.rec.AsSaid = "open", "Voting"
		case now <= p.graceEnds:
			p.rec.Outcome, p.rec.AsSaid = "closed", "Grace"
		case p.no.Cmp(p.yes) >= 0:
			// The Baal's own state: defeated once its vote is over, no event.
			p.rec.Outcome, p.rec.AsSaid = "rejected", "Defeated"
		default:
			p.rec.Outcome, p.rec.AsSaid = "closed", "Ready"
		}
		if p.processed || p.cancelled {
			p.rec.DecidedAt = unixTime(p.decided)
		}
		slices.SortStableFunc(p.rec.Votes, func(a, b VoteRecord) int { return strings.Compare(a.Account, b.Account) })
		out = append(out, p.rec)
	}
	return out, nil
}

// baalTitle is a proposal's title and kind from what its submission says
// (evm.BaalDetails): the title's first line, "proposal" when no kind is named.
func baalTitle(e evm.BaalEvent) (title, kind string) {
	kind = e.ProposalType
	if kind == "" {
		kind = "proposal"
	}
	return proposalTitle(snapshots.Proposal{ID: e.Proposal, Description: e.Title}), kind
}

func unixTime(sec int64) *string {
	if sec <= 0 {
		return nil
	}
	t := time.Unix(sec, 0).UTC().Format(time.RFC3339)
	return &t
}

// BaalProposals makes proposals/v2 of a map from an evm-baal-proposals
// reading, whose detail keeps the records made when it was read.
func BaalProposals(mapID, sha string, s *snapshots.Snapshot) (Proposals, error) {
	var detail struct {
		DAO       string           `json:"dao"`
		Proposals []ProposalRecord `json:"proposals"`
	}
	if err := json.Unmarshal(s.Detail, &detail); err != nil {
		return Proposals{}, fmt.Errorf("the reading's proposals can't be read: %w", err)
	}
	if err := checkBaalRecords(s.Chain, detail.DAO, detail.Proposals); err != nil {
		return Proposals{}, err
	}
	out := Proposals{Schema: ProposalsSchema, Map: mapID,
		Source:    ProposalsSource{Kind: "baal", Contract: detail.DAO, Calls: s.Source.Calls, At: s.Block.Time, Snapshot: sha},
		Proposals: detail.Proposals}
	if out.Source.Calls == nil {
		out.Source.Calls = []snapshots.Call{}
	}
	if out.Proposals == nil {
		out.Proposals = []ProposalRecord{}
	}
	return out, nil
}

// baalOutcomes are the outcomes BaalProposalRecords writes.
var baalOutcomes = map[string]bool{"open": true, "approved": true, "rejected": true, "removed": true,
	"expired": true, "failed": true, "closed": true}

// checkBaalRecords refuses records that are not what the reader writes: a
// reading may come from elsewhere (synced, posted), and its records are
// served as they are kept, so each is checked as a Sputnik reading's are
// when it is made into records: its ref under the DAO, a known outcome, and
// accounts that are addresses on the reading's chain.
func checkBaalRecords(chain, dao string, records []ProposalRecord) error {
	a, err := evm.ParseAddress(dao)
	if err != nil || a.Hex() != dao {
		return fmt.Errorf("the reading names its DAO %q, not a lower-case EVM address", dao)
	}
	account := func(id string) bool {
		got, ok := strings.CutPrefix(id, chain+":")
		if !ok {
			return false
		}
		x, err := evm.ParseAddress(got)
		return err == nil && x.Hex() == got
	}
	for _, r := range records {
		bad := func(why string) error {
			return fmt.Errorf("the reading's proposal %q is not one a Baal's reader writes: %s", r.ID, why)
		}
		switch {
		case r.Ref != chain+":"+dao+"/proposals/"+r.ID:
			return bad("its ref is " + r.Ref)
		case !baalOutcomes[r.Outcome]:
			return bad("its outcome is " + r.Outcome)
		case r.Proposer != nil && !account(*r.Proposer):
			return bad("its proposer is no address on " + chain)
		}
		for _, v := range r.Votes {
			if !account(v.Account) {
				return bad("a vote is by " + v.Account + ", no address on " + chain)
			}
		}
	}
	return nil
}

// ReadingProposals makes proposals/v2 of a map from its proposals reading,
// whichever reader made it.
func ReadingProposals(mapID, sha string, s *snapshots.Snapshot) (Proposals, error) {
	if s.Network == BaalProposalsNetwork {
		return BaalProposals(mapID, sha, s)
	}
	return SputnikProposals(mapID, sha, s)
}
