package evm

import (
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// A Baal (Moloch v3, DAOhaus) keeps its members in two ERC-20s it owns:
// shares (voting) and loot (non-voting); its proposals live in its events.

// BaalEventKind names a Baal event petal reads.
type BaalEventKind string

// The Baal events petal reads, by what they say.
const (
	BaalSubmit  BaalEventKind = "submit"  // SubmitProposal
	BaalSponsor BaalEventKind = "sponsor" // SponsorProposal: its vote starts
	BaalVote    BaalEventKind = "vote"    // SubmitVote
	BaalProcess BaalEventKind = "process" // ProcessProposal
	BaalCancel  BaalEventKind = "cancel"  // CancelProposal
	BaalConfig  BaalEventKind = "config"  // GovernanceConfigSet: the voting period from then on
)

// MaxBaalTitle bounds the title text kept of one proposal, in bytes.
const MaxBaalTitle = 4096

// BaalEvent is one Baal event as its log says, with its block's time (Unix
// seconds). Which fields are set depends on Kind.
type BaalEvent struct {
	Kind     BaalEventKind
	Proposal uint64
	Block    uint64
	Time     int64
	// Account is the submission's sender (the transaction's), the sponsor,
	// or the voter.
	Account Address
	// Amount is a vote's weight: the voter's shares when the vote started.
	Amount   Amount
	Approved bool
	// Passed and ActionFailed are a processing's result.
	Passed, ActionFailed bool
	// VotingPeriod is, on a submission, the DAO's voting period then; on a
	// config, the new one (0: unchanged), and Grace its grace period (0:
	// unchanged). Seconds.
	VotingPeriod, Grace uint64
	// Expiration is a submission's (0: none), Unix seconds.
	Expiration  uint64
	SelfSponsor bool
	// VotingStarts is when a sponsored proposal's vote starts, Unix seconds.
	VotingStarts uint64
	// Title is a submission's title as BaalDetails reads it from the whole
	// details text (cut to MaxBaalTitle after), and ProposalType the kind
	// DAOhaus' app names ("" when it names none).
	Title, ProposalType string
}

// BaalDetails reads a submission's details: DAOhaus' app writes a JSON
// object with its title and proposalType; anything else is text, its own
// title. Read whole, before any cut: a cut JSON object is no longer JSON.
func BaalDetails(details string) (title, proposalType string) {
	var d struct {
		Title        string `json:"title"`
		ProposalType string `json:"proposalType"`
	}
	if json.Unmarshal([]byte(details), &d) != nil || strings.TrimSpace(d.Title) == "" {
		return details, ""
	}
	if t := strings.TrimSpace(d.ProposalType); utf8.RuneCountInString(t) <= 40 {
		proposalType = strings.ToLower(t)
	}
	return d.Title, proposalType
}
