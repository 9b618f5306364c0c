package credit

import "testing"

func TestIntentCreditIsWhatArrivedNeverMoreThanAsked(t *testing.T) {
	top := IntentTopUp{USD: 5_000_000, AmountOut: "5000000"}
	price := Price{TopUpFeeBps: 150}
	for _, tc := range []struct {
		name      string
		obs       SwapObservation
		added, fe Micros
		bad       bool
	}{
		{"delivered in full", SwapObservation{Status: SwapSuccess, AmountOut: "5000000"}, 5_000_000, 75_000, false},
		{"1Click doesn't say: the quote's amount_out", SwapObservation{Status: SwapSuccess}, 5_000_000, 75_000, false},
		{"more than asked: what was asked", SwapObservation{Status: SwapSuccess, AmountOut: "9000000"}, 5_000_000, 75_000, false},
		{"less than asked: what arrived", SwapObservation{Status: SwapSuccess, AmountOut: "4999999"}, 4_999_999, 74_999, false},
		{"not SUCCESS: nothing", SwapObservation{Status: SwapProcessing, AmountOut: "5000000"}, 0, 0, false},
		{"an amount that isn't one", SwapObservation{Status: SwapSuccess, AmountOut: "5e6"}, 0, 0, true},
		{"past what micro-dollars hold", SwapObservation{Status: SwapSuccess, AmountOut: "99999999999999999999"}, 0, 0, true},
	} {
		added, fee, err := IntentCredit(top, tc.obs, price)
		if (err != nil) != tc.bad || added != tc.added || fee != tc.fe {
			t.Errorf("%s: %d %d %v", tc.name, added, fee, err)
		}
	}
	if !SwapRefunded.Final() || SwapIncompleteDeposit.Final() || SwapStatus("DONE").Known() {
		t.Error("statuses")
	}
}
