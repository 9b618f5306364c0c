package porttest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

// reserve asks l for one call's worst case under the domain's rule
// (credit.PlanHold), as the app's ledger does.
func reserve(ctx context.Context, l ports.LedgerStore, id, process string, p credit.Payer, worst credit.Micros) (credit.Hold, error) {
	h := credit.Hold{ID: id, RunID: "run_" + id, ChatID: "chat_" + id, ProcessID: process, Payer: p}
	return l.Reserve(ctx, h, p.Accounts(suiteNow), func(accounts []credit.Account, chatTaken credit.Micros) ([]credit.HoldLine, error) {
		return credit.PlanHold(p, accounts, chatTaken, worst, suiteNow)
	})
}

// settle charges a reservation actual (credit.PlanSettle), with usage when given.
func settle(ctx context.Context, l ports.LedgerStore, id string, actual credit.Micros, usage *credit.Usage) (bool, error) {
	return l.Settle(ctx, id, false, func(h credit.Hold) (credit.Settlement, error) {
		return credit.PlanSettle(h, actual, credit.Price{}, 0, usage, credit.CallContext{}, suiteNow)
	})
}

func account(t *testing.T, l ports.LedgerStore, id string) credit.Account {
	t.Helper()
	a, err := l.Account(t.Context(), id)
	must(t, err)
	return a
}

// LedgerStoreContract runs the LedgerStore contract.
func LedgerStoreContract(t *testing.T, newStores func(t *testing.T) Stores) {
	invitePayer := func(inv string) credit.Payer {
		return credit.Payer{Kind: credit.PayInvite, InviteID: inv, DailyCap: 1000 * credit.MicrosPerUSD}
	}

	t.Run("a reservation holds, settles once, and then releases nothing", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		inv := mintInvite(t, h.Invites, credit.MicrosPerUSD)
		hold, err := reserve(ctx, h.Ledger, "res_1", "proc_1", invitePayer(inv.ID), 10_000)
		must(t, err)
		if len(hold.Lines) != 2 || hold.Total() != 10_000 {
			t.Fatalf("hold: %+v", hold)
		}
		daily := credit.DailyAccount(suiteNow)
		if a := account(t, h.Ledger, daily); a.Limit != 1000*credit.MicrosPerUSD || a.Held != 10_000 {
			t.Fatalf("the day's account is made on first use at the cap: %+v", a)
		}
		if a := account(t, h.Ledger, credit.InviteAccount(inv.ID)); a.Held != 10_000 || a.Spent != 0 {
			t.Fatalf("held: %+v", a)
		}
		done, err := settle(ctx, h.Ledger, "res_1", 4_000, nil)
		if err != nil || !done {
			t.Fatalf("settle: %v %v", done, err)
		}
		for _, id := range []string{credit.InviteAccount(inv.ID), daily} {
			if a := account(t, h.Ledger, id); a.Held != 0 || a.Spent != 4_000 {
				t.Fatalf("%s after settling: %+v", id, a)
			}
		}
		if done, err := settle(ctx, h.Ledger, "res_1", 4_000, nil); err != nil || done {
			t.Fatalf("a second settle: %v %v", done, err)
		}
		if done, err := h.Ledger.Release(ctx, "res_1"); err != nil || done {
			t.Fatalf("a release after settling: %v %v", done, err)
		}
		if a := account(t, h.Ledger, credit.InviteAccount(inv.ID)); a.Spent != 4_000 {
			t.Fatalf("charged once: %+v", a)
		}
		if _, err := settle(ctx, h.Ledger, "res_nope", 1, nil); !errs.Is(err, errs.NotFound) {
			t.Fatalf("an unknown reservation: %v", err)
		}
		if _, err := h.Ledger.Account(ctx, credit.PersonAccount("prs_nobody")); !errs.Is(err, errs.NotFound) {
			t.Fatalf("an unknown account: %v", err)
		}
	})

	t.Run("a release gives the hold back, once", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		inv := mintInvite(t, h.Invites, credit.MicrosPerUSD)
		_, err := reserve(ctx, h.Ledger, "res_2", "proc_1", invitePayer(inv.ID), 10_000)
		must(t, err)
		if done, err := h.Ledger.Release(ctx, "res_2"); err != nil || !done {
			t.Fatalf("release: %v %v", done, err)
		}
		if done, err := h.Ledger.Release(ctx, "res_2"); err != nil || done {
			t.Fatalf("a second release: %v %v", done, err)
		}
		if done, err := settle(ctx, h.Ledger, "res_2", 1, nil); err != nil || done {
			t.Fatalf("a settle after its own process released it charges nothing: %v %v", done, err)
		}
		if a := account(t, h.Ledger, credit.InviteAccount(inv.ID)); a.Held != 0 || a.Spent != 0 {
			t.Fatalf("after release: %+v", a)
		}
	})

	t.Run("a hold a sweep released is still charged by a late settle, once", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		inv := mintInvite(t, h.Invites, credit.MicrosPerUSD)
		_, err := reserve(ctx, h.Ledger, "res_s", "proc_dead", invitePayer(inv.ID), 10_000)
		must(t, err)
		if n, err := h.Ledger.ReleaseOrphans(ctx, 30*time.Second, 100); err != nil || n != 1 {
			t.Fatalf("swept: %v %v", n, err)
		}
		if a := account(t, h.Ledger, credit.InviteAccount(inv.ID)); a.Held != 0 || a.Spent != 0 {
			t.Fatalf("the sweep gives the hold back: %+v", a)
		}
		if done, err := settle(ctx, h.Ledger, "res_s", 3_000, nil); err != nil || !done {
			t.Fatalf("the late settle of a swept hold: %v %v", done, err)
		}
		if done, err := settle(ctx, h.Ledger, "res_s", 3_000, nil); err != nil || done {
			t.Fatalf("and only once: %v %v", done, err)
		}
		if a := account(t, h.Ledger, credit.InviteAccount(inv.ID)); a.Held != 0 || a.Spent != 3_000 {
			t.Fatalf("no charge is lost, nothing held twice back: %+v", a)
		}
	})

	t.Run("a missing account or a spent one refuses, and the refusal holds nothing", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		if _, err := reserve(ctx, h.Ledger, "res_3", "proc_1", invitePayer("inv_00000000000000000000000000000000"), 10_000); err == nil {
			t.Fatal("an invite with no account can't pay")
		}
		inv := mintInvite(t, h.Invites, 10_000)
		_, err := reserve(ctx, h.Ledger, "res_4", "proc_1", invitePayer(inv.ID), 10_000)
		must(t, err)
		_, err = reserve(ctx, h.Ledger, "res_5", "proc_1", invitePayer(inv.ID), 10_000)
		if !errs.Is(err, errs.BudgetExhausted) {
			t.Fatalf("nothing left: %v", err)
		}
		if a := account(t, h.Ledger, credit.InviteAccount(inv.ID)); a.Held != 10_000 {
			t.Fatalf("the refused call held nothing: %+v", a)
		}
	})

	t.Run("the day's cap is one account: it holds to the micro-dollar, and a changed cap applies at once", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		day := credit.DailyAccount(suiteNow)
		open := func(capMicros credit.Micros) credit.Payer {
			return credit.Payer{Kind: credit.PayOpen, DailyCap: capMicros}
		}
		for i := range 40 {
			_, err := reserve(ctx, h.Ledger, fmt.Sprintf("res_day_%d", i), "proc_1", open(100_000), 2_500)
			must(t, err)
		}
		if _, err := reserve(ctx, h.Ledger, "res_day_more", "proc_1", open(100_000), 2_500); !errs.Is(err, errs.BudgetExhausted) {
			t.Fatalf("the day's cap is held: %v", err)
		}
		if a := account(t, h.Ledger, day); a.Limit != 100_000 || a.Held != 100_000 || a.Spent != 0 {
			t.Fatalf("the day answers for every hold on it: %+v", a)
		}
		for i := range 10 {
			if _, err := settle(ctx, h.Ledger, fmt.Sprintf("res_day_%d", i), 1_000, nil); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := reserve(ctx, h.Ledger, "res_day_low", "proc_1", open(80_000), 2_500); !errs.Is(err, errs.BudgetExhausted) {
			t.Fatalf("a cap lowered below what the day holds and spent refuses: %v", err)
		}
		if a := account(t, h.Ledger, day); a.Limit != 80_000 || a.Held != 75_000 || a.Spent != 10_000 {
			t.Fatalf("the lowered cap is the day's: %+v", a)
		}
		admitted := 0
		for i := range 10 {
			if _, err := reserve(ctx, h.Ledger, fmt.Sprintf("res_day_up_%d", i), "proc_1", open(100_000), 2_500); err == nil {
				admitted++
			}
		}
		if a := account(t, h.Ledger, day); admitted != 6 || a.Limit != 100_000 || a.Held+a.Spent != 100_000 {
			t.Fatalf("the cap raised again lets exactly its room through: %d admitted, %+v", admitted, a)
		}
	})

	t.Run("racing reservations pass a budget by less than one call", func(t *testing.T) {
		h := newStores(t)
		const budget, cost, callers = 50_000, 10_000, 20
		inv := mintInvite(t, h.Invites, budget)
		var wg sync.WaitGroup
		for c := range callers {
			wg.Go(func() {
				for i := 0; ; i++ {
					id := fmt.Sprintf("res_%d_%d", c, i)
					_, err := reserve(context.Background(), h.Ledger, id, "proc_1", invitePayer(inv.ID), cost)
					if errs.Is(err, errs.BudgetExhausted) {
						return
					}
					if err != nil {
						t.Error(err)
						return
					}
					if _, err := settle(context.Background(), h.Ledger, id, cost, nil); err != nil {
						t.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
		a := account(t, h.Ledger, credit.InviteAccount(inv.ID))
		if a.Held != 0 || a.Spent < budget || a.Spent >= budget+cost {
			t.Fatalf("spent %d of %d (calls of %d), held %d", a.Spent, budget, cost, a.Held)
		}
	})

	t.Run("a sweep releases the held reservations of lapsed processes, and only those", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		must(t, h.Leases.Register(ctx, ports.Process{ID: "proc_live", Hostname: "h", PID: 1, BuildID: "dev"}))
		inv := mintInvite(t, h.Invites, credit.MicrosPerUSD)
		for id, proc := range map[string]string{"res_live": "proc_live", "res_gone": "proc_gone", "res_done": "proc_gone"} {
			_, err := reserve(ctx, h.Ledger, id, proc, invitePayer(inv.ID), 1_000)
			must(t, err)
		}
		_, err := settle(ctx, h.Ledger, "res_done", 500, nil)
		must(t, err)
		n, err := h.Ledger.ReleaseOrphans(ctx, 30*time.Second, 100)
		if err != nil || n != 1 {
			t.Fatalf("orphans released: %v %v", n, err)
		}
		if a := account(t, h.Ledger, credit.InviteAccount(inv.ID)); a.Held != 1_000 || a.Spent != 500 {
			t.Fatalf("only the gone process's hold goes back: %+v", a)
		}
		if n, err := h.Ledger.ReleaseOrphans(ctx, 30*time.Second, 100); err != nil || n != 0 {
			t.Fatalf("a second sweep finds nothing: %v %v", n, err)
		}
	})

	t.Run("a top-up counts once; a person's calls are recorded and reconciled once", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		in, err := signIn(t, h.People, addressHash(9), "")
		must(t, err)
		top := credit.TopUp{TxHash: "9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin", Network: "mainnet", PersonID: in.PersonID,
			WalletID: in.Session.WalletID, Yocto: "1000000000000000000000000", NearUSD: 3 * credit.MicrosPerUSD, Added: 3 * credit.MicrosPerUSD}
		if added, err := h.Ledger.TopUp(ctx, top); err != nil || !added {
			t.Fatalf("top-up: %v %v", added, err)
		}
		if added, err := h.Ledger.TopUp(ctx, top); err != nil || added {
			t.Fatalf("the same transfer again: %v %v", added, err)
		}
		person := credit.PersonAccount(in.PersonID)
		if a := account(t, h.Ledger, person); a.Kind != credit.KindPerson || a.Limit != 3*credit.MicrosPerUSD {
			t.Fatalf("credit: %+v", a)
		}

		payer := credit.Payer{Kind: credit.PayPerson, PersonID: in.PersonID}
		_, err = reserve(ctx, h.Ledger, "res_p", "proc_1", payer, 20_000)
		must(t, err)
		usage := &credit.Usage{InferenceID: "inf_1", Model: "m", TokensIn: 10, TokensOut: 5}
		done, err := settle(ctx, h.Ledger, "res_p", 12_000, usage)
		if err != nil || !done {
			t.Fatalf("settle: %v %v", done, err)
		}
		records, err := h.Ledger.Usage(ctx, person, 10)
		if err != nil || len(records) != 1 || records[0].InferenceID != "inf_1" || records[0].List != 12_000 || records[0].Billed != nil {
			t.Fatalf("usage: %+v %v", records, err)
		}
		pending, err := h.Ledger.PendingBills(ctx, person, 10)
		if err != nil || len(pending) != 1 || pending[0].ReservationID != "res_p" {
			t.Fatalf("pending bills: %+v %v", pending, err)
		}
		must(t, h.Ledger.Reconcile(ctx, "res_p", 10_000))
		must(t, h.Ledger.Reconcile(ctx, "res_p", 10_000))
		if a := account(t, h.Ledger, person); a.Spent != 10_000 {
			t.Fatalf("the bill replaces the list price, once: spent %d", a.Spent)
		}
		if pending, err := h.Ledger.PendingBills(ctx, person, 10); err != nil || len(pending) != 0 {
			t.Fatalf("no bill pending: %+v %v", pending, err)
		}
		records, err = h.Ledger.Usage(ctx, person, 10)
		if err != nil || len(records) != 1 || records[0].Billed == nil || *records[0].Billed != 10_000 || records[0].Reconciled != -2_000 {
			t.Fatalf("reconciled record: %+v %v", records, err)
		}
		if err := h.Ledger.Reconcile(ctx, "res_nope", 1); !errs.Is(err, errs.NotFound) {
			t.Fatalf("reconciling an unknown call: %v", err)
		}
	})
}
