package nearrpc

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// Sputnik v2 DAOs and their factory.

type daoConfig struct {
	Name    string `json:"name"`
	Purpose string `json:"purpose"`
}

type daoPolicy struct {
	Roles []struct {
		Name string          `json:"name"`
		Kind json.RawMessage `json:"kind"`
	} `json:"roles"`
}

// proposal is a Sputnik v2 proposal as get_proposals gives it.
type proposal struct {
	ID             uint64            `json:"id"`
	Proposer       string            `json:"proposer"`
	Description    string            `json:"description"`
	Kind           json.RawMessage   `json:"kind"`
	Status         string            `json:"status"`
	Votes          map[string]string `json:"votes"`
	SubmissionTime string            `json:"submission_time"`
}

// DAOProfile implements ports.NearReading.
func (r *reading) DAOProfile(ctx context.Context, dao string) (snapshots.DAOProfile, error) {
	var cfg daoConfig
	if err := r.view(ctx, dao, "get_config", nil, &cfg); err != nil {
		return snapshots.DAOProfile{}, err
	}
	return snapshots.DAOProfile{Name: cfg.Name, Purpose: cfg.Purpose}, nil
}

// DAORoles implements ports.NearReading.
func (r *reading) DAORoles(ctx context.Context, dao string) ([]snapshots.DAORole, error) {
	var policy daoPolicy
	if err := r.view(ctx, dao, "get_policy", nil, &policy); err != nil {
		return nil, err
	}
	var roles []snapshots.DAORole
	for _, role := range policy.Roles {
		var kind struct {
			Group []string `json:"Group"`
		}
		// "Everyone" and {"Member": …} name no accounts; only groups do.
		if json.Unmarshal(role.Kind, &kind) != nil || kind.Group == nil {
			continue
		}
		roles = append(roles, snapshots.DAORole{Name: role.Name, Members: kind.Group})
	}
	return roles, nil
}

// DAOProposals implements ports.NearReading: get_last_proposal_id, then
// get_proposals page by page from the newest max proposals' first id, then
// get_policy for its proposal_period, all at the reading's block.
func (r *reading) DAOProposals(ctx context.Context, dao string, max int, progress ports.Paging) (snapshots.Proposals, error) {
	var last uint64
	if err := r.view(ctx, dao, "get_last_proposal_id", nil, &last); err != nil {
		return snapshots.Proposals{}, err
	}
	total := int(min(last, uint64(max)))
	// The newest proposals matter most: past the bound, read the last ones.
	from := int(last) - total
	progress(0, total)
	out := snapshots.Proposals{Last: last}
	for next := from; next < int(last); {
		var page []proposal
		if err := r.view(ctx, dao, "get_proposals", pageArgs(next, r.c.pageSize), &page); err != nil {
			return snapshots.Proposals{}, err
		}
		if len(page) == 0 {
			break // ids can have gaps at the end; an empty page is the end
		}
		for _, p := range page {
			out.List = append(out.List, snapshots.Proposal{ID: p.ID, Proposer: p.Proposer, Description: p.Description,
				Kind: p.Kind, Status: p.Status, SubmissionTime: p.SubmissionTime, Votes: p.Votes})
		}
		next += r.c.pageSize
		progress(min(len(out.List), total), total)
	}
	// A proposal closes its policy's proposal_period after its submission;
	// the period is read at the same block as the proposals.
	var policy struct {
		ProposalPeriod json.RawMessage `json:"proposal_period"`
	}
	if err := r.view(ctx, dao, "get_policy", nil, &policy); err != nil {
		return snapshots.Proposals{}, err
	}
	out.ProposalPeriod = u64Text(policy.ProposalPeriod)
	return out, nil
}

// u64Text is a Sputnik U64 (a JSON string of digits) as its digits, or ""
// when it is anything else: a period that can't be read is not guessed.
func u64Text(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) != nil || s == "" || len(s) > 20 {
		return ""
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return ""
	}
	return strconv.FormatUint(n, 10)
}

// DAOs implements ports.NearContracts: the factory's get_number_daos, then
// get_daos page by page.
func (c *Client) DAOs(ctx context.Context, chain string, max int) ([]string, error) {
	factory := snapshots.DAOFactory(chain)
	var n int
	if err := c.view(ctx, chain, 0, factory, "get_number_daos", nil, &n); err != nil {
		return nil, err
	}
	n = min(n, max)
	var out []string
	for from := 0; from < n; from += c.pageSize {
		var page []string
		if err := c.view(ctx, chain, 0, factory, "get_daos", pageArgs(from, c.pageSize), &page); err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		// A page longer than asked for still stops at max.
		out = append(out, page[:min(len(page), max-len(out))]...)
	}
	return out, nil
}
