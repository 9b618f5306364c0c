package snapshots

import (
	"encoding/json"
	"strings"
)

// What NEAR's contracts say, in the domain's words: the NEAR adapter reads
// them off the wire (ports.NearContracts), the tallies in tally.go turn them
// into a reading's groups and accounts.

// NearDecimals is yoctoNEAR per NEAR, as a power of ten.
const NearDecimals = 24

// MaxTokenDecimals is the most decimals a token may say it has and still be
// read (10^77 is about the largest power of ten a u256 holds).
const MaxTokenDecimals = 77

// DAOProfile is what a Sputnik DAO says of itself.
type DAOProfile struct {
	Name    string
	Purpose string
}

// DAORole is one role of a DAO's policy that names its members. Roles open to
// everyone or to every token holder name no accounts and are never listed.
type DAORole struct {
	Name    string
	Members []string
}

// Proposal is one proposal of a DAO and the votes cast on it. Kind is the
// proposal's kind as the DAO gives it; Votes maps a voter to Approve, Reject
// or Remove. The JSON form is the one a reading keeps in its detail.
type Proposal struct {
	ID             uint64            `json:"id"`
	Proposer       string            `json:"proposer"`
	Description    string            `json:"description"`
	Kind           json.RawMessage   `json:"kind"`
	Status         string            `json:"status"`
	SubmissionTime string            `json:"submission_time"`
	Votes          map[string]string `json:"votes"`
}

// Proposals is a DAO's proposals as read: the newest ones, the id the DAO
// will give its next proposal (get_last_proposal_id), and its policy's
// proposal_period at the same block (nanoseconds, as text; "" when not read):
// a proposal's vote closes that long after its submission.
type Proposals struct {
	Last           uint64
	List           []Proposal
	ProposalPeriod string
}

// Delegation is one account's stake in a validator's staking pool, in
// yoctoNEAR (whole numbers).
type Delegation struct {
	Account       string
	StakedYocto   string
	UnstakedYocto string
	CanWithdraw   bool
}

// Token is what a fungible token says of itself (its metadata).
type Token struct {
	Name     string
	Symbol   string
	Decimals int
}

// DAOSuffix is the Sputnik v2 factory's suffix on each chain: a DAO named
// "marketing" is marketing.sputnik-dao.near on mainnet.
func DAOSuffix(chain string) string {
	if chain == Testnet {
		return ".sputnikv2.testnet"
	}
	return ".sputnik-dao.near"
}

// DAOFactory is the Sputnik v2 factory's account on chain.
func DAOFactory(chain string) string { return strings.TrimPrefix(DAOSuffix(chain), ".") }
