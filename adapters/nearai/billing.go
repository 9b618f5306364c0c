package nearai

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/ports"
)

var _ ports.ModelBilling = (*Client)(nil)

type billingRequest struct {
	RequestIDs []string `json:"requestIds"`
}

type billingResponse struct {
	Requests []struct {
		RequestID   string      `json:"requestId"`
		CostNanoUSD json.Number `json:"costNanoUsd"`
	} `json:"requests"`
}

// Billed implements ports.ModelBilling: POST /billing/costs with the calls'
// inference ids. Costs come in 10^-9 dollars and are rounded up to whole
// micro-dollars, as list prices are.
func (c *Client) Billed(ctx context.Context, inferenceIDs []string) (map[string]credit.Micros, error) {
	out := map[string]credit.Micros{}
	if len(inferenceIDs) == 0 {
		return out, nil
	}
	body, err := json.Marshal(billingRequest{RequestIDs: inferenceIDs})
	if err != nil {
		return nil, err
	}
	res, b, err := c.do(ctx, http.MethodPost, "/billing/costs", body, "")
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		return nil, statusError(res.StatusCode, b)
	}
	var r billingResponse
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("nearai: billing answer: %w", err)
	}
	for _, q := range r.Requests {
		nano, err := q.CostNanoUSD.Int64()
		if err != nil || nano < 0 || q.RequestID == "" {
			continue // a cost petal can't read is left unreconciled
		}
		out[q.RequestID] = credit.Micros((nano + 999) / 1000)
	}
	return out, nil
}
