package credit

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFeesRoundDownAndFreeAllowance(t *testing.T) {
	p := Price{CallFeeBps: 250, PerTurn: 3_000, PerTool: map[string]Micros{"render_flower": 10_000}, FreeAllowance: 1_000_000}
	cases := []struct {
		name string
		p    Price
		bill Micros
		cc   CallContext
		want CallFees
	}{
		{"all off charges nothing", Price{}, 1_000, CallContext{Tools: []string{"render_flower"}, EndsTurn: true}, CallFees{Tools: []Micros{0}}},
		{"A rounds down to the micro-dollar", Price{CallFeeBps: 250}, 39, CallContext{}, CallFees{Call: 0}},
		{"A on 2.5% of 41 is 1.025, so 1", Price{CallFeeBps: 250}, 41, CallContext{}, CallFees{Call: 1}},
		{"C only when the answer ends the turn", Price{PerTurn: 3_000}, 10, CallContext{}, CallFees{}},
		{"C once for the answer that ends it", Price{PerTurn: 3_000}, 10, CallContext{EndsTurn: true}, CallFees{Turn: 3_000}},
		{"D per use by name; unpriced tools cost nothing", Price{PerTool: map[string]Micros{"render_flower": 10_000}}, 10,
			CallContext{Tools: []string{"render_flower", "get_snapshot", "render_flower"}}, CallFees{Tools: []Micros{10_000, 0, 10_000}}},
		{"within the allowance: no base fee at all", p, 400_000, CallContext{BilledBefore: 600_000, EndsTurn: true, Tools: []string{"render_flower"}}, CallFees{}},
		{"crossing it: A on the part past it, C and D in full", p, 400_000, CallContext{BilledBefore: 800_000, EndsTurn: true, Tools: []string{"render_flower"}},
			CallFees{Call: 5_000, Turn: 3_000, Tools: []Micros{10_000}}},
		{"past it: A on the whole bill", p, 400_000, CallContext{BilledBefore: 2_000_000}, CallFees{Call: 10_000}},
		{"a bill of nothing past the allowance still pays C", p, 0, CallContext{BilledBefore: 2_000_000, EndsTurn: true}, CallFees{Turn: 3_000}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, tc.p.Fees(tc.bill, tc.cc))
		})
	}
}

func TestTopUpFeeAndWorstCase(t *testing.T) {
	assert.Equal(t, Micros(0), Price{}.TopUpFee(5_000_000))
	assert.Equal(t, Micros(49_999), Price{TopUpFeeBps: 100}.TopUpFee(4_999_999), "1% of 4.999999 rounds down")
	assert.Equal(t, Micros(0), Price{TopUpFeeBps: 100}.TopUpFee(-5))

	assert.Equal(t, Micros(1_000), Price{}.WorstCase(1_000, 0, []string{"render_flower"}), "all off: the bill alone")
	p := Price{CallFeeBps: 250, PerTurn: 3_000, PerTool: map[string]Micros{"render_flower": 10_000}}
	// bill 1000 + A 25 + tip 10% 100 + C 3000 + D 2×10000
	assert.Equal(t, Micros(24_125), p.WorstCase(1_000, 10, []string{"render_flower", "get_snapshot", "render_flower"}))
	// The worst case bounds every settle of that bill, whatever the allowance says.
	for _, before := range []Micros{0, 500, 2_000_000} {
		cc := CallContext{Tools: []string{"render_flower"}, EndsTurn: true, BilledBefore: before}
		pe := p
		pe.FreeAllowance = 1_000
		f := pe.Fees(1_000, cc)
		total := 1_000 + f.Call + f.Turn + TipOf(1_000, 10)
		for _, d := range f.Tools {
			total += d
		}
		assert.LessOrEqual(t, total, pe.WorstCase(1_000, 10, cc.Tools))
	}
}

func TestParsePercentBpsAndPerTool(t *testing.T) {
	for in, want := range map[string]int64{"0": 0, "2.5": 250, "0.01": 1, "100": 10_000, "1": 100} {
		got, err := ParsePercentBps(in)
		require.NoError(t, err, in)
		assert.Equal(t, want, got, in)
	}
	for _, in := range []string{"0.001", "-1", "100.01", "1e2", "2,5", "abc"} {
		_, err := ParsePercentBps(in)
		assert.Error(t, err, in)
	}
	tools, err := ParsePerTool(" render_flower=0.01, get_snapshot=0.02 ,")
	require.NoError(t, err)
	assert.Equal(t, map[string]Micros{"render_flower": 10_000, "get_snapshot": 20_000}, tools)
	tools, err = ParsePerTool("")
	require.NoError(t, err)
	assert.Empty(t, tools)
	for _, in := range []string{"render_flower", "render_flower=", "render_flower=0.0000001", "Render=1", "a=1,a=2", "a=-1", "=1"} {
		_, err := ParsePerTool(in)
		assert.Error(t, err, in)
	}
}

func TestPlanSettleEachFeeItsOwnEntry(t *testing.T) {
	p := Price{CallFeeBps: 1000, PerTurn: 3_000, PerTool: map[string]Micros{"render_flower": 10_000, "get_snapshot": 20_000}, FreeAllowance: 500}
	personHold := Hold{ID: "h", RunID: "run", Lines: []HoldLine{{"person:p", KindPerson, 100_000}}}
	cc := CallContext{Tools: []string{"get_snapshot", "render_flower"}, EndsTurn: true, BilledBefore: 0}
	st, err := PlanSettle(personHold, 1_000, p, 5, &Usage{Model: "m"}, cc, noon)
	require.NoError(t, err)
	assert.Equal(t, []Charge{
		{Account: "person:p", Kind: EntryCall, Amount: 1_000, Note: "model call"},
		{Account: "person:p", Kind: EntryFee, Amount: 50, Note: "Petals base fee (call)"}, // 10% of the 500 past the allowance
		{Account: "person:p", Kind: EntryFee, Amount: 3_000, Note: "Petals base fee (turn)"},
		{Account: "person:p", Kind: EntryFee, Amount: 20_000, Note: "Petals base fee (tool get_snapshot)"},
		{Account: "person:p", Kind: EntryFee, Amount: 10_000, Note: "Petals base fee (tool render_flower)"},
		{Account: "person:p", Kind: EntryTip, Amount: 50, Note: "tip"},
	}, st.Charges)
	require.NotNil(t, st.Usage)
	assert.Equal(t, Micros(1_000+50+3_000+20_000+10_000+50), st.Usage.Charged, "the usage record counts every part")

	inviteHold := Hold{ID: "h", RunID: "run", Lines: []HoldLine{{"invite:i", KindInvite, 9}, {"daily:d", KindDaily, 9}}}
	st, err = PlanSettle(inviteHold, 7, p, 10, nil, cc, noon)
	require.NoError(t, err)
	assert.Equal(t, []Charge{
		{Account: "invite:i", Kind: EntryCall, Amount: 7, Note: "model call"},
		{Account: "daily:d", Kind: EntryCall, Amount: 7, Note: "model call"},
	}, st.Charges, "an invite and the daily cap pay NEAR AI's bill only")
}
