package credit

import (
	"math/big"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/domain/errs"
)

var noon = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)

func TestDailyAccountResetsAtMidnightUTC(t *testing.T) {
	assert.Equal(t, "daily:2026-11-30", DailyAccount(time.Date(2026, 11, 30, 23, 59, 59, 0, time.UTC)))
	assert.Equal(t, "daily:2026-12-01", DailyAccount(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)))
	berlin := time.FixedZone("CET", 3600)
	assert.Equal(t, "daily:2026-11-30", DailyAccount(time.Date(2026, 12, 1, 0, 30, 0, 0, berlin)), "the day is UTC's")
	assert.Equal(t, time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), NextMidnightUTC(noon))
}

func TestPayerAccounts(t *testing.T) {
	inv := Payer{Kind: PayInvite, InviteID: "inv_1", DailyCap: 3}
	specs := inv.Accounts(noon)
	require.Len(t, specs, 2)
	assert.Equal(t, "invite:inv_1", specs[0].ID, "the invite first: the per-chat cap counts on it")
	assert.Equal(t, "daily:2026-11-30", specs[1].ID)
	assert.True(t, specs[1].Create)
	assert.EqualValues(t, 3, specs[1].Limit)

	person := Payer{Kind: PayPerson, PersonID: "prs_1"}
	assert.Equal(t, []AccountSpec{{ID: "person:prs_1", Kind: KindPerson}}, person.Accounts(noon), "no daily cap on a person's credit")
	assert.Len(t, Payer{Kind: PayOpen}.Accounts(noon), 1)
}

func TestPlanHold(t *testing.T) {
	payer := Payer{Kind: PayInvite, InviteID: "inv_1", PerChat: InvitePerChat, DailyCap: 3_000_000}
	invite := Account{ID: "invite:inv_1", Kind: KindInvite, Limit: 50_000}
	daily := Account{ID: "daily:2026-11-30", Kind: KindDaily, Limit: 3_000_000}
	past := noon.Add(-time.Minute)

	lines, err := PlanHold(payer, []Account{invite, daily}, 0, 8_000, noon)
	require.NoError(t, err)
	assert.Equal(t, []HoldLine{{"invite:inv_1", KindInvite, 8_000}, {"daily:2026-11-30", KindDaily, 8_000}}, lines)

	almost := invite
	almost.Spent, almost.Held = 30_000, 19_999
	_, err = PlanHold(payer, []Account{almost, daily}, 0, 8_000, noon)
	assert.Equal(t, errs.BudgetExhausted, errs.CodeOf(err), "one micro-dollar left: a call whose worst case is more is refused before it is made")
	assert.ErrorContains(t, err, "$0.008")
	almost.Held = 12_000 // exactly the worst case left: it fits
	lines, err = PlanHold(payer, []Account{almost, daily}, 0, 8_000, noon)
	require.NoError(t, err)
	assert.EqualValues(t, 8_000, lines[0].Amount, "it holds its whole worst case")

	cases := []struct {
		name      string
		payer     Payer
		accounts  []Account
		chatTaken Micros
		code      errs.Code
	}{
		{"invite spent", payer, []Account{{ID: invite.ID, Kind: KindInvite, Limit: 50_000, Spent: 50_000}, daily}, 0, errs.BudgetExhausted},
		{"invite held to its end", payer, []Account{{ID: invite.ID, Kind: KindInvite, Limit: 50_000, Held: 50_000}, daily}, 0, errs.BudgetExhausted},
		{"invite revoked", payer, []Account{{ID: invite.ID, Kind: KindInvite, Limit: 50_000, RevokedAt: &past}, daily}, 0, errs.BudgetExhausted},
		{"invite expired", payer, []Account{{ID: invite.ID, Kind: KindInvite, Limit: 50_000, ExpiresAt: &noon}, daily}, 0, errs.BudgetExhausted},
		{"daily cap spent", payer, []Account{invite, {ID: daily.ID, Kind: KindDaily, Limit: 3_000_000, Spent: 3_000_001}}, 0, errs.BudgetExhausted},
		{"chat's cap reached", payer, []Account{invite, daily}, InvitePerChat, errs.BudgetExhausted},
		{"the call would pass the chat's cap", payer, []Account{invite, daily}, InvitePerChat - 999, errs.BudgetExhausted},
		{"the call would pass the daily cap", payer, []Account{invite, {ID: daily.ID, Kind: KindDaily, Limit: 3_000_000, Spent: 2_999_001}}, 0, errs.BudgetExhausted},
		{"the call would pass a person's credit", Payer{Kind: PayPerson, PersonID: "prs_1"}, []Account{{ID: "person:prs_1", Kind: KindPerson, Limit: 10, Spent: 1}}, 0, errs.PaymentRequired},
		{"invite missing", payer, []Account{daily}, 0, errs.InviteRequired},
		{"person spent", Payer{Kind: PayPerson, PersonID: "prs_1"}, []Account{{ID: "person:prs_1", Kind: KindPerson, Limit: 10, Spent: 10}}, 0, errs.PaymentRequired},
		{"person has no account", Payer{Kind: PayPerson, PersonID: "prs_1"}, nil, 0, errs.PaymentRequired},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := PlanHold(tc.payer, tc.accounts, tc.chatTaken, 1_000, noon)
			assert.Equal(t, tc.code, errs.CodeOf(err), "%v", err)
		})
	}
	_, err = PlanHold(payer, []Account{invite, daily}, 0, 0, noon)
	assert.Error(t, err, "a hold must hold something")
}

func TestPlanSettle(t *testing.T) {
	inviteHold := Hold{ID: "h", RunID: "run", Lines: []HoldLine{{"invite:i", KindInvite, 9}, {"daily:d", KindDaily, 9}}}
	st, err := PlanSettle(inviteHold, 7, Price{CallFeeBps: 1000}, 10, &Usage{Model: "m"}, CallContext{}, noon)
	require.NoError(t, err)
	assert.Equal(t, []Charge{
		{Account: "invite:i", Kind: EntryCall, Amount: 7, Note: "model call"},
		{Account: "daily:d", Kind: EntryCall, Amount: 7, Note: "model call"},
	}, st.Charges, "an invite pays the bill alone: fee and tip are a person's")
	assert.Nil(t, st.Usage, "usage records are a person's")

	personHold := Hold{ID: "h", RunID: "run", Lines: []HoldLine{{"person:p", KindPerson, 2_000}}}
	usage := Usage{InferenceID: "inf", Model: "m", TokensIn: 10, TokensCached: 4, TokensOut: 3}
	st, err = PlanSettle(personHold, 1_000, Price{CallFeeBps: 250}, 5, &usage, CallContext{}, noon)
	require.NoError(t, err)
	assert.Equal(t, []Charge{
		{Account: "person:p", Kind: EntryCall, Amount: 1_000, Note: "model call"},
		{Account: "person:p", Kind: EntryFee, Amount: 25, Note: "Petals base fee (call)"},
		{Account: "person:p", Kind: EntryTip, Amount: 50, Note: "tip"},
	}, st.Charges, "bill, fee and tip are each their own entry")
	require.NotNil(t, st.Usage)
	assert.Equal(t, UsageRecord{ReservationID: "h", Account: "person:p", RunID: "run", Usage: usage, List: 1_000, Charged: 1_075, At: noon}, *st.Usage)

	st, err = PlanSettle(personHold, 0, Price{CallFeeBps: 250}, 5, nil, CallContext{}, noon)
	require.NoError(t, err)
	assert.Len(t, st.Charges, 1, "a call that cost nothing charges nothing more")
	_, err = PlanSettle(personHold, -1, Price{}, 0, nil, CallContext{}, noon)
	assert.Error(t, err)
}

func TestPriceDoc(t *testing.T) {
	d := Price{}.Doc()
	assert.Equal(t, "price/v2", d.Version)
	assert.False(t, d.BaseFee.A.On || d.BaseFee.B.On || d.BaseFee.C.On || d.BaseFee.D.On || d.BaseFee.E.On, "every switch off")
	assert.Equal(t, 50, d.Tip.MaxPercent)
	on := Price{CallFeeBps: 250}.Doc()
	b, _ := on.BaseFee.A.Percent.MarshalJSON()
	assert.True(t, on.BaseFee.A.On)
	assert.Equal(t, "2.5", string(b))
	for p, ok := range map[int]bool{0: true, 1: true, 50: true, 51: false, -1: false} {
		assert.Equal(t, ok, ValidTip(p), p)
	}
}

func TestNearToDollars(t *testing.T) {
	y, err := ParseYocto("2000000000000000000000000")
	require.NoError(t, err)
	m, err := YoctoToMicros(y, 3_250_000)
	require.NoError(t, err)
	assert.EqualValues(t, 6_500_000, m, "2 NEAR at $3.25")
	y, _ = ParseYocto("1")
	m, _ = YoctoToMicros(y, 3_250_000)
	assert.Zero(t, m, "rounded down: never credited more than sent")
	for _, bad := range []string{"", "-1", "1.5", "1e24", "abc"} {
		_, err := ParseYocto(bad)
		assert.Error(t, err, bad)
	}
	// Past what one top-up may add, or what the ledger stores: refused.
	_, err = YoctoToMicros(mustYocto("200000000000000000000000000000000"), 3_250_000)
	assert.Error(t, err, "200 million NEAR, $650M, is past one top-up")
	_, err = YoctoToMicros(mustYocto("200000000000000000000000000000"), 3_250_000)
	require.NoError(t, err, "200,000 NEAR, $650,000, is within it")
	_, err = YoctoToMicros(new(big.Int).Exp(big.NewInt(10), big.NewInt(40), nil), 1)
	assert.Error(t, err, "41 digits of yocto")
	b, _ := NEARNumber{Yocto: mustYocto("2500000000000000000000000")}.MarshalJSON()
	assert.Equal(t, "2.5", string(b))
	b, _ = NEARNumber{Yocto: mustYocto("1")}.MarshalJSON()
	assert.Equal(t, "0.000000000000000000000001", string(b))
	b, _ = NEARNumber{}.MarshalJSON()
	assert.Equal(t, "0", string(b))
}

func mustYocto(s string) *big.Int {
	y, err := ParseYocto(s)
	if err != nil {
		panic(err)
	}
	return y
}
