package memory

import (
	"context"

	"github.com/petal-near/petal/domain/credit"
	"github.com/petal-near/petal/ports"
)

// FixedNearPrice is the NEAR price PETAL_NEAR_USD fixes (without it petal
// reads NEAR Intents' token list: adapters/oneclick).
type FixedNearPrice struct {
	Price credit.Micros // 0: unknown
}

var _ ports.NearPrice = FixedNearPrice{}

// NearUSD implements ports.NearPrice.
func (p FixedNearPrice) NearUSD(context.Context) (credit.Micros, bool, error) {
	return p.Price, p.Price > 0, nil
}
