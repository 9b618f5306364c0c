package maps

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/petal-near/petal/domain/snapshots"
)

// ProposalsSchema is the format id of a map's proposals.
const ProposalsSchema = "proposals/v2"

// MaxProposalTitle bounds a proposal's title, in characters: the first line
// of its description.
const MaxProposalTitle = 200

// Proposals is a map's proposals (proposals/v2), from its newest reading of
// them.
type Proposals struct {
	Schema    string           `json:"schema"`
	Map       string           `json:"map"`
	Source    ProposalsSource  `json:"source"`
	Proposals []ProposalRecord `json:"proposals"`
}

// ProposalsSource is where the proposals were read: the DAO's kind, its
// contract, the calls made and when (the reading's block time).
type ProposalsSource struct {
	Kind     string           `json:"kind"`
	Contract string           `json:"contract"`
	Calls    []snapshots.Call `json:"calls"`
	At       string           `json:"at"`
	Snapshot string           `json:"snapshot"`
}

// ProposalRecord is one proposal. Times the source doesn't record are null,
// never guessed: a Sputnik DAO records no time for a vote nor for a decision.
type ProposalRecord struct {
	ID        string  `json:"id"`
	Title     string  `json:"title"`
	Kind      string  `json:"kind"`
	Proposer  *string `json:"proposer"` // the proposer's petal id
	At        *string `json:"at"`       // submitted
	ClosesAt  *string `json:"closes_at"`
	DecidedAt *string `json:"decided_at"`
	// Outcome is open, approved, rejected, removed, expired, failed, moved,
	// or closed when voting closed and the source doesn't say the result.
	Outcome   string       `json:"outcome"`
	AsSaid    string       `json:"as_said"` // the status as the chain wrote it
	Ref       string       `json:"ref"`
	Recipient *string      `json:"recipient"` // whom it pays (a Transfer's receiver), or null
	Options   []string     `json:"options"`   // null: a Sputnik ballot has no options
	Votes     []VoteRecord `json:"votes"`     // only accounts that voted
}

// VoteRecord is one account's vote. Vote is for, against or abstain, or null
// when the choice is none of those (a Sputnik "Remove").
type VoteRecord struct {
	Account string   `json:"account"`
	Vote    *string  `json:"vote"`
	AsSaid  string   `json:"as_said"`
	At      *string  `json:"at"`
	Choices []Choice `json:"choices"`
	// Power is the vote's weight; null when the reading doesn't say it.
	Power *string `json:"power"`
}

// Choice is one choice of a vote and its weight, as decimal text.
type Choice struct {
	Choice string `json:"choice"`
	Weight string `json:"weight"`
}

// outcomes are what a Sputnik DAO's proposal statuses say of the outcome.
var outcomes = map[string]string{
	"InProgress": "open", "Approved": "approved", "Rejected": "rejected", "Removed": "removed",
	"Expired": "expired", "Failed": "failed", "Moved": "moved",
}

// votes are what a Sputnik DAO's votes mean as for, against or abstain.
var votes = map[string]string{"Approve": "for", "Reject": "against"}

// SputnikProposals makes proposals/v2 of a map from a near-dao-proposals
// reading: its detail's proposals, the newest first, each with the votes it
// holds. The reading's chain writes every account as a petal id.
func SputnikProposals(mapID, sha string, s *snapshots.Snapshot) (Proposals, error) {
	var detail struct {
		Proposals      []snapshots.Proposal `json:"proposals"`
		ProposalPeriod string               `json:"proposal_period"`
	}
	if len(s.Detail) > 0 {
		if err := json.Unmarshal(s.Detail, &detail); err != nil {
			return Proposals{}, fmt.Errorf("the reading's proposals can't be read: %w", err)
		}
	}
	var p struct {
		DAO string `json:"dao"`
	}
	_ = json.Unmarshal(s.Params, &p)
	out := Proposals{
		Schema: ProposalsSchema, Map: mapID,
		Source:    ProposalsSource{Kind: "sputnik-dao", Contract: p.DAO, Calls: s.Source.Calls, At: s.Block.Time, Snapshot: sha},
		Proposals: make([]ProposalRecord, 0, len(detail.Proposals)),
	}
	if out.Source.Calls == nil {
		out.Source.Calls = []snapshots.Call{}
	}
	for _, pr := range detail.Proposals {
		outcome, ok := outcomes[pr.Status]
		if !ok {
			outcome = "closed"
		}
		kind, recipient := proposalKind(pr.Kind)
		rec := ProposalRecord{
			ID: strconv.FormatUint(pr.ID, 10), Title: proposalTitle(pr), Kind: kind,
			At: nanosToTime(pr.SubmissionTime), ClosesAt: closesAt(pr.SubmissionTime, detail.ProposalPeriod), Outcome: outcome, AsSaid: pr.Status,
			Ref:   fmt.Sprintf("%s:%s/proposals/%d", s.Chain, p.DAO, pr.ID),
			Votes: make([]VoteRecord, 0, len(pr.Votes)),
		}
		if snapshots.ValidNearAccount(pr.Proposer) {
			id := snapshots.AccountID(s.Chain, pr.Proposer)
			rec.Proposer = &id
		}
		if snapshots.ValidNearAccount(recipient) {
			id := snapshots.AccountID(s.Chain, recipient)
			rec.Recipient = &id
		}
		voters := make([]string, 0, len(pr.Votes))
		for v := range pr.Votes {
			if snapshots.ValidNearAccount(v) {
				voters = append(voters, v)
			}
		}
		slices.Sort(voters)
		for _, v := range voters {
			said := pr.Votes[v]
			rv := VoteRecord{Account: snapshots.AccountID(s.Chain, v), AsSaid: said,
				Choices: []Choice{{Choice: strings.ToLower(said), Weight: "1"}}}
			if m, ok := votes[said]; ok {
				rv.Vote = &m
			}
			rec.Votes = append(rec.Votes, rv)
		}
		out.Proposals = append(out.Proposals, rec)
	}
	slices.SortStableFunc(out.Proposals, func(a, b ProposalRecord) int {
		ai, _ := strconv.ParseUint(a.ID, 10, 64)
		bi, _ := strconv.ParseUint(b.ID, 10, 64)
		switch {
		case ai > bi:
			return -1
		case ai < bi:
			return 1
		}
		return 0
	})
	return out, nil
}

// proposalKind is a Sputnik kind's name ("Transfer", "AddMemberToRole"), and
// a Transfer's receiver.
func proposalKind(raw json.RawMessage) (kind, recipient string) {
	raw = bytes.TrimSpace(raw)
	var name string
	if json.Unmarshal(raw, &name) == nil {
		return name, ""
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal(raw, &obj) != nil || len(obj) != 1 {
		return "unknown", ""
	}
	for k, v := range obj {
		kind = k
		if k == "Transfer" {
			var t struct {
				ReceiverID string `json:"receiver_id"`
			}
			_ = json.Unmarshal(v, &t)
			recipient = t.ReceiverID
		}
	}
	return kind, recipient
}

// proposalTitle is the first line of a proposal's description, cut, or its
// number when it says nothing.
func proposalTitle(p snapshots.Proposal) string {
	line, _, _ := strings.Cut(strings.TrimSpace(p.Description), "\n")
	line = strings.TrimSpace(line)
	if line == "" {
		return fmt.Sprintf("Proposal %d", p.ID)
	}
	if utf8.RuneCountInString(line) > MaxProposalTitle {
		r := []rune(line)
		line = string(r[:MaxProposalTitle-1]) + "…"
	}
	return line
}

// closesAt is when a proposal's vote closes: its submission plus the
// policy's proposal period, both in nanoseconds as the chain writes them;
// null when either is missing or the sum is past what a time holds.
func closesAt(submitted, period string) *string {
	at, err := strconv.ParseInt(submitted, 10, 64)
	if err != nil || at <= 0 {
		return nil
	}
	p, err := strconv.ParseInt(period, 10, 64)
	if err != nil || p < 0 || p > math.MaxInt64-at {
		return nil
	}
	return nanosToTime(strconv.FormatInt(at+p, 10))
}

// nanosToTime reads a Sputnik time (nanoseconds since 1970, as text).
func nanosToTime(ns string) *string {
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil || n <= 0 {
		return nil
	}
	t := time.Unix(0, n).UTC().Format(time.RFC3339)
	return &t
}
