package nearrpc

import (
	"context"
	"encoding/json"
	"slices"
	"sync"

	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/domain/snapshots"
	"github.com/petal-near/petal/ports"
)

// The contracts petal's readers read (Sputnik DAOs in sputnik.go, staking
// pools in staking.go, fungible tokens in ft.go), behind ports.NearContracts:
// their view methods, the shapes of their answers, their paging.

var _ ports.NearContracts = (*Client)(nil)

// Pin implements ports.NearContracts.
func (c *Client) Pin(ctx context.Context, chain string) (ports.NearReading, error) {
	block, err := c.FinalBlock(ctx, chain)
	if err != nil {
		return nil, err
	}
	return &reading{c: c, chain: chain, block: block}, nil
}

// reading is one reading pinned to a block, keeping the calls it made.
type reading struct {
	c     *Client
	chain string
	block snapshots.Block

	mu    sync.Mutex
	calls []snapshots.Call
}

func (r *reading) Block() snapshots.Block { return r.block }

func (r *reading) Source() snapshots.Source {
	r.mu.Lock()
	defer r.mu.Unlock()
	return snapshots.Source{Calls: slices.Clone(r.calls)}
}

// view calls a view method at the pinned block and decodes its JSON answer.
// Calls are recorded per contract and method; a repeated call counts pages.
func (r *reading) view(ctx context.Context, contract, method string, args, out any) error {
	r.record(contract, method, args)
	return r.c.view(ctx, r.chain, r.block.Height, contract, method, args, out)
}

func (r *reading) record(contract, method string, args any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range r.calls {
		c := &r.calls[i]
		if c.Contract == contract && c.Method == method {
			if c.Pages == 0 {
				c.Pages = 1
			}
			c.Pages++
			// Many calls have many arguments; which came first is chance
			// (calls run in parallel), so none is kept.
			c.Args = ""
			return
		}
	}
	call := snapshots.Call{Contract: contract, Method: method}
	if args != nil {
		b, _ := json.Marshal(args)
		call.Args = string(b)
	}
	r.calls = append(r.calls, call)
}

// view calls a view method at height at (0: the final block) and decodes its
// JSON answer; an answer of another shape is the contract's fault.
func (c *Client) view(ctx context.Context, chain string, at uint64, contract, method string, args, out any) error {
	b, err := c.CallFunction(ctx, chain, at, contract, method, args)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return errs.Newf(errs.CannotRead, "%s answered %s with something petal can't read: it may not be the kind of contract this reader reads", contract, method).WithCause(err)
	}
	return nil
}

// pageArgs are the arguments of a paged view method (get_proposals,
// get_accounts, get_daos).
func pageArgs(from, limit int) map[string]int {
	return map[string]int{"from_index": from, "limit": limit}
}
