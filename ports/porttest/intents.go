package porttest

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
)

func newIntent(personID, address string) credit.IntentTopUp {
	return credit.IntentTopUp{DepositAddress: address, PersonID: personID, USD: 5 * credit.MicrosPerUSD,
		OriginAsset: "nep141:eth.omft.near", RefundTo: "0x2527D02599Ba641c19FEa793cD0F9a6e8457C317",
		AmountIn: "2000000000000000", AmountInFormatted: "0.002", AmountInUSD: "5.0125", AmountOut: "5000000", AmountOutUSD: "4.9998",
		Deadline: suiteNow.Add(time.Hour), Quote: []byte(`{"quote":{}}`), Status: credit.SwapPendingDeposit, CreatedAt: suiteNow}
}

// IntentTopUpsContract runs the IntentTopUps contract (the harness's
// Intents, over its People and Ledger).
func IntentTopUpsContract(t *testing.T, newStores func(t *testing.T) Stores) {
	planAll := func(t credit.IntentTopUp) (credit.Micros, credit.Micros, error) {
		return t.USD, t.USD / 100, nil
	}
	t.Run("a top-up is stored once and read back", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		in, err := signIn(t, h.People, addressHash(21), "")
		must(t, err)
		top := newIntent(in.PersonID, "0xdead01")
		must(t, h.Intents.CreateIntentTopUp(ctx, top))
		if err := h.Intents.CreateIntentTopUp(ctx, top); !errs.Is(err, errs.Conflict) {
			t.Fatalf("the same deposit address again: %v", err)
		}
		got, err := h.Intents.IntentTopUp(ctx, top.DepositAddress)
		if err != nil || got.PersonID != in.PersonID || got.USD != top.USD || got.Status != credit.SwapPendingDeposit ||
			!got.Deadline.Equal(top.Deadline) || string(got.Quote) != string(top.Quote) || got.CreditedAt != nil {
			t.Fatalf("read back: %+v %v", got, err)
		}
		if _, err := h.Intents.IntentTopUp(ctx, "0xnope"); !errs.Is(err, errs.NotFound) {
			t.Fatalf("unknown: %v", err)
		}
	})

	t.Run("SUCCESS credits once, as its own entries; a final status is never replaced", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		in, err := signIn(t, h.People, addressHash(22), "")
		must(t, err)
		top := newIntent(in.PersonID, "0xdead02")
		must(t, h.Intents.CreateIntentTopUp(ctx, top))
		got, credited, err := h.Intents.ObserveIntentTopUp(ctx, top.DepositAddress, credit.SwapObservation{Status: credit.SwapProcessing, OriginTx: "0xabc"},
			suiteNow.Add(time.Minute), planAll)
		if err != nil || credited || got.Status != credit.SwapProcessing || got.OriginTx != "0xabc" {
			t.Fatalf("processing: %+v %v %v", got, credited, err)
		}
		// A status that flips back before the end is recorded as it is.
		got, credited, err = h.Intents.ObserveIntentTopUp(ctx, top.DepositAddress, credit.SwapObservation{Status: credit.SwapKnownDepositTx},
			suiteNow.Add(2*time.Minute), planAll)
		if err != nil || credited || got.Status != credit.SwapKnownDepositTx || got.OriginTx != "0xabc" {
			t.Fatalf("flipped back: %+v %v %v", got, credited, err)
		}
		got, credited, err = h.Intents.ObserveIntentTopUp(ctx, top.DepositAddress, credit.SwapObservation{Status: credit.SwapSuccess, DestinationTx: "9xyz"},
			suiteNow.Add(3*time.Minute), planAll)
		if err != nil || !credited || got.Credited != top.USD || got.Fee != top.USD/100 || got.CreditedAt == nil || got.DestinationTx != "9xyz" {
			t.Fatalf("success: %+v %v %v", got, credited, err)
		}
		for _, s := range []credit.SwapStatus{credit.SwapSuccess, credit.SwapProcessing, credit.SwapRefunded} {
			got, credited, err = h.Intents.ObserveIntentTopUp(ctx, top.DepositAddress, credit.SwapObservation{Status: s}, suiteNow.Add(4*time.Minute), planAll)
			if err != nil || credited || got.Status != credit.SwapSuccess || got.Credited != top.USD {
				t.Fatalf("after success, %s: %+v %v %v", s, got, credited, err)
			}
		}
		a := account(t, h.Ledger, credit.PersonAccount(in.PersonID))
		if a.Limit != top.USD || a.Spent != top.USD/100 {
			t.Fatalf("credit once, fee once: %+v", a)
		}
	})

	t.Run("observers racing on one SUCCESS credit it once", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		in, err := signIn(t, h.People, addressHash(23), "")
		must(t, err)
		top := newIntent(in.PersonID, "0xdead03")
		must(t, h.Intents.CreateIntentTopUp(ctx, top))
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				_, credited, err := h.Intents.ObserveIntentTopUp(ctx, top.DepositAddress, credit.SwapObservation{Status: credit.SwapSuccess},
					suiteNow.Add(time.Minute), planAll)
				if err != nil {
					t.Error(err)
				}
				if credited {
					wins.Add(1)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("credited %d times", wins.Load())
		}
		if a := account(t, h.Ledger, credit.PersonAccount(in.PersonID)); a.Limit != top.USD {
			t.Fatalf("credit: %+v", a)
		}
	})

	t.Run("a refused plan changes nothing; refunds and failures end it with no credit", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		in, err := signIn(t, h.People, addressHash(24), "")
		must(t, err)
		a, b := newIntent(in.PersonID, "0xdead04"), newIntent(in.PersonID, "0xdead05")
		must(t, h.Intents.CreateIntentTopUp(ctx, a))
		must(t, h.Intents.CreateIntentTopUp(ctx, b))
		_, _, err = h.Intents.ObserveIntentTopUp(ctx, a.DepositAddress, credit.SwapObservation{Status: credit.SwapSuccess}, suiteNow,
			func(credit.IntentTopUp) (credit.Micros, credit.Micros, error) {
				return 0, 0, errs.New(errs.BadInput, "no")
			})
		if !errs.Is(err, errs.BadInput) {
			t.Fatalf("refused plan: %v", err)
		}
		if got, _ := h.Intents.IntentTopUp(ctx, a.DepositAddress); got.Status != credit.SwapPendingDeposit || got.CheckedAt != nil {
			t.Fatalf("a refused plan changed it: %+v", got)
		}
		got, credited, err := h.Intents.ObserveIntentTopUp(ctx, a.DepositAddress, credit.SwapObservation{Status: credit.SwapRefunded}, suiteNow, planAll)
		if err != nil || credited || got.Status != credit.SwapRefunded || got.CreditedAt != nil {
			t.Fatalf("refunded: %+v %v %v", got, credited, err)
		}
		got, credited, err = h.Intents.ObserveIntentTopUp(ctx, b.DepositAddress, credit.SwapObservation{Status: credit.SwapFailed}, suiteNow, planAll)
		if err != nil || credited || got.Status != credit.SwapFailed {
			t.Fatalf("failed: %+v %v %v", got, credited, err)
		}
		got, credited, err = h.Intents.ObserveIntentTopUp(ctx, b.DepositAddress, credit.SwapObservation{Status: credit.SwapSuccess}, suiteNow, planAll)
		if err != nil || credited || got.Status != credit.SwapFailed {
			t.Fatalf("a failed swap never turns into credit: %+v %v %v", got, credited, err)
		}
		if _, err := h.Ledger.Account(ctx, credit.PersonAccount(in.PersonID)); !errs.Is(err, errs.NotFound) {
			t.Fatalf("no credit at all: %v", err)
		}
	})

	t.Run("followed: open ones, until a day past their deadline, least recently checked first", func(t *testing.T) {
		h := newStores(t)
		ctx := t.Context()
		in, err := signIn(t, h.People, addressHash(25), "")
		must(t, err)
		old, fresh, done, late := newIntent(in.PersonID, "0xold"), newIntent(in.PersonID, "0xfresh"), newIntent(in.PersonID, "0xdone"), newIntent(in.PersonID, "0xlate")
		late.Deadline = suiteNow.Add(-credit.IntentGrace - time.Minute)
		for _, x := range []credit.IntentTopUp{old, fresh, done, late} {
			must(t, h.Intents.CreateIntentTopUp(ctx, x))
		}
		_, _, err = h.Intents.ObserveIntentTopUp(ctx, done.DepositAddress, credit.SwapObservation{Status: credit.SwapRefunded}, suiteNow, planAll)
		must(t, err)
		_, _, err = h.Intents.ObserveIntentTopUp(ctx, old.DepositAddress, credit.SwapObservation{Status: credit.SwapPendingDeposit}, suiteNow, planAll)
		must(t, err)
		list, err := h.Intents.FollowedIntentTopUps(ctx, suiteNow, 10)
		if err != nil || len(list) != 2 || list[0].DepositAddress != fresh.DepositAddress || list[1].DepositAddress != old.DepositAddress {
			t.Fatalf("followed: %+v %v", list, err)
		}
		if list, err := h.Intents.FollowedIntentTopUps(ctx, suiteNow, 1); err != nil || len(list) != 1 {
			t.Fatalf("limit: %+v %v", list, err)
		}
	})
}
