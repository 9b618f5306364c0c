package nearrpc

import (
	"context"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// Fungible tokens (NEP-141 with NEP-148 metadata).

// balanceCallsAtOnce is how many ft_balance_of calls one reading runs at
// once.
const balanceCallsAtOnce = 8

// Token implements ports.NearReading.
func (r *reading) Token(ctx context.Context, token string) (snapshots.Token, error) {
	var meta struct {
		Name     string `json:"name"`
		Symbol   string `json:"symbol"`
		Decimals int    `json:"decimals"`
	}
	if err := r.view(ctx, token, "ft_metadata", nil, &meta); err != nil {
		return snapshots.Token{}, err
	}
	if meta.Decimals < 0 || meta.Decimals > snapshots.MaxTokenDecimals {
		return snapshots.Token{}, errs.Newf(errs.CannotRead, "%s says it has %d decimals, which petal can't read", token, meta.Decimals)
	}
	return snapshots.Token{Name: meta.Name, Symbol: meta.Symbol, Decimals: meta.Decimals}, nil
}

// Balances implements ports.NearReading: ft_balance_of for each account,
// balanceCallsAtOnce at a time.
func (r *reading) Balances(ctx context.Context, token string, accounts []string, progress ports.Paging) ([]string, error) {
	total := len(accounts)
	progress(0, total)
	out := make([]string, total)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(balanceCallsAtOnce)
	var (
		mu   sync.Mutex
		done int
	)
	for i, account := range accounts {
		if gctx.Err() != nil {
			break // a call failed, or the caller has gone: start no more
		}
		g.Go(func() error {
			var raw string
			if err := r.view(gctx, token, "ft_balance_of", map[string]string{"account_id": account}, &raw); err != nil {
				return err
			}
			if _, err := snapshots.ShiftDecimal(raw, 0); err != nil {
				return errs.Newf(errs.CannotRead, "%s answered ft_balance_of with a balance petal can't read", token).WithCause(err)
			}
			out[i] = raw
			mu.Lock()
			defer mu.Unlock()
			done++
			progress(done, total)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return out, nil
}
