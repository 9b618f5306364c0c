package oneclick_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/petal-near/petal/adapters/oneclick"
	"github.com/petal-near/petal/adapters/oneclick/oneclicktest"
	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/domain/errs"
	"github.com/petal-near/petal/ports"
)

func TestSwapsAgainstTheFake1Click(t *testing.T) {
	fake := oneclicktest.New(t)
	s := oneclick.NewSwaps(fake.URL, "partner-jwt", nil, nil)
	ctx := t.Context()

	tokens, err := s.SwapTokens(ctx)
	require.NoError(t, err)
	require.Len(t, tokens, 3)
	assert.Equal(t, ports.SwapToken{Asset: "nep141:wrap.near", Chain: "near", Symbol: "wNEAR", Decimals: 24, USD: "3.1234567"}, tokens[0],
		"the price kept as 1Click wrote it")

	deadline := time.Date(2026, 11, 30, 13, 0, 0, 0, time.UTC)
	q, err := s.QuoteSwap(ctx, ports.SwapQuoteRequest{OriginAsset: oneclicktest.ETH, DestinationAsset: oneclick.USDCAsset, AmountOut: "5000000",
		Recipient: "petals.near", RefundTo: "0x2527D02599Ba641c19FEa793cD0F9a6e8457C317", Deadline: deadline})
	require.NoError(t, err)
	assert.Equal(t, "5000000", q.AmountOut)
	assert.Equal(t, "2005000000000000", q.AmountIn, "$5 of ETH at $2,500 with 0.25%")
	assert.Equal(t, "0.002005", q.AmountInFormatted)
	assert.True(t, q.Deadline.Equal(deadline))
	assert.Contains(t, string(q.Raw), `"signature"`, "the whole answer is kept")
	sent := fake.Quotes()[0]
	assert.Equal(t, oneclicktest.QuoteRequest{Dry: false, SwapType: "EXACT_OUTPUT", SlippageTolerance: 100, OriginAsset: oneclicktest.ETH,
		DepositType: "ORIGIN_CHAIN", DestinationAsset: oneclick.USDCAsset, Amount: "5000000", RefundTo: "0x2527D02599Ba641c19FEa793cD0F9a6e8457C317",
		RefundType: "ORIGIN_CHAIN", Recipient: "petals.near", RecipientType: "INTENTS", Deadline: "2026-11-30T13:00:00.000Z"}, sent)
	assert.Equal(t, []string{"Bearer partner-jwt"}, fake.Authorizations())

	_, err = s.QuoteSwap(ctx, ports.SwapQuoteRequest{OriginAsset: "nep141:nope", DestinationAsset: oneclick.USDCAsset, AmountOut: "5000000",
		Recipient: "petals.near", RefundTo: "x", Deadline: deadline})
	require.True(t, errs.Is(err, errs.SourceFailed), "%v", err)
	assert.Contains(t, err.Error(), "tokenIn is not valid", "1Click's own reason")

	fake.Script(q.DepositAddress, oneclicktest.Step{Status: "PROCESSING"}, oneclicktest.Step{Status: "SUCCESS", AmountOut: "5000000"})
	obs, err := s.SwapStatus(ctx, q.DepositAddress, "")
	require.NoError(t, err)
	assert.Equal(t, credit.SwapProcessing, obs.Status)
	assert.NotEmpty(t, obs.OriginTx)
	obs, err = s.SwapStatus(ctx, q.DepositAddress, "")
	require.NoError(t, err)
	assert.Equal(t, credit.SwapObservation{Status: credit.SwapSuccess, AmountOut: "5000000", OriginTx: obs.OriginTx, DestinationTx: obs.DestinationTx}, obs)
	assert.NotEmpty(t, obs.DestinationTx)

	_, err = s.SwapStatus(ctx, "0xunknown", "")
	assert.True(t, errs.Is(err, errs.SourceFailed), "%v", err)

	fake.Down(true)
	_, err = s.SwapStatus(ctx, q.DepositAddress, "")
	assert.True(t, errs.Is(err, errs.SourceFailed), "%v", err)
	_, err = s.QuoteSwap(ctx, ports.SwapQuoteRequest{OriginAsset: oneclicktest.ETH, DestinationAsset: oneclick.USDCAsset, AmountOut: "1", Recipient: "petals.near", RefundTo: "x", Deadline: deadline})
	assert.True(t, errs.Is(err, errs.SourceFailed), "%v", err)
	tokens, err = s.SwapTokens(ctx)
	require.NoError(t, err, "the list is cached a minute")
	assert.Len(t, tokens, 3)
}

func TestSwapsReadBoundedAnswers(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"PROCESSING","swapDetails":{"nearTxHashes":["` + strings.Repeat("a", 70<<10) + `"]}}`))
	}))
	t.Cleanup(srv.Close)
	_, err := oneclick.NewSwaps(srv.URL, "", nil, nil).SwapStatus(t.Context(), "0xabc", "")
	require.True(t, errs.Is(err, errs.SourceFailed), "%v", err)
	assert.Contains(t, err.Error(), "more than")

	odd := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = w.Write([]byte(`{"status":"DONE_MAYBE","swapDetails":{}}`))
	}))
	t.Cleanup(odd.Close)
	_, err = oneclick.NewSwaps(odd.URL, "", nil, nil).SwapStatus(t.Context(), "0xabc", "")
	assert.True(t, errs.Is(err, errs.SourceFailed), "an unknown status is not believed: %v", err)
}
