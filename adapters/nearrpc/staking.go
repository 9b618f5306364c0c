package nearrpc

import (
	"context"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// A validator's staking pool (the core staking-pool contract).

// poolAccount is one entry of get_accounts.
type poolAccount struct {
	AccountID       string `json:"account_id"`
	UnstakedBalance string `json:"unstaked_balance"`
	StakedBalance   string `json:"staked_balance"`
	CanWithdraw     bool   `json:"can_withdraw"`
}

// Delegators implements ports.NearReading: get_number_of_accounts, then
// get_accounts page by page.
func (r *reading) Delegators(ctx context.Context, pool string, max int, progress ports.Paging) ([]snapshots.Delegation, error) {
	var n int
	if err := r.view(ctx, pool, "get_number_of_accounts", nil, &n); err != nil {
		return nil, err
	}
	n = min(n, max)
	progress(0, n)
	var out []snapshots.Delegation
	seen := 0
	for from := 0; from < n; from += r.c.pageSize {
		var page []poolAccount
		if err := r.view(ctx, pool, "get_accounts", pageArgs(from, r.c.pageSize), &page); err != nil {
			return nil, err
		}
		if len(page) == 0 {
			break
		}
		for _, a := range page {
			if _, err := snapshots.ShiftDecimal(a.StakedBalance, 0); err != nil {
				return nil, errs.Newf(errs.CannotRead, "%s answered get_accounts with a balance petal can't read", pool).WithCause(err)
			}
			out = append(out, snapshots.Delegation{Account: a.AccountID, StakedYocto: a.StakedBalance, UnstakedYocto: a.UnstakedBalance, CanWithdraw: a.CanWithdraw})
		}
		seen += len(page)
		progress(min(seen, n), n)
	}
	return out, nil
}
