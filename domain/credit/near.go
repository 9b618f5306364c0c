package credit

import (
	"fmt"
	"math/big"
	"strings"
)

// YoctoPerNEAR is 10^24.
var YoctoPerNEAR = new(big.Int).Exp(big.NewInt(10), big.NewInt(24), nil)

// ParseYocto reads a yoctoNEAR amount (a decimal string of digits).
func ParseYocto(s string) (*big.Int, error) {
	if s == "" || len(s) > 40 || strings.TrimLeft(s, "0123456789") != "" {
		return nil, fmt.Errorf("%q is not a yoctoNEAR amount", s)
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, fmt.Errorf("%q is not a yoctoNEAR amount", s)
	}
	return n, nil
}

// MaxTopUp is the most one top-up may add: a million dollars. The ledger sums
// a person's top-ups, fees and spend in int64 micro-dollars (and PostgreSQL's
// bigint), so a bound per top-up keeps every sum far from overflowing.
const MaxTopUp = 1_000_000 * MicrosPerUSD

// MaxYoctoDigits is the most digits a stored NEAR amount has (numeric(40, 0)).
const MaxYoctoDigits = 40

// YoctoToMicros is yocto NEAR in micro-dollars at nearUSD micro-dollars per
// NEAR, rounded down: a person is never credited more than they sent. An
// amount past MaxTopUp, or more NEAR than the ledger stores, is an error.
func YoctoToMicros(yocto *big.Int, nearUSD Micros) (Micros, error) {
	if yocto.Sign() < 0 || len(yocto.String()) > MaxYoctoDigits {
		return 0, fmt.Errorf("the amount is too large")
	}
	v := new(big.Int).Mul(yocto, big.NewInt(int64(nearUSD)))
	v.Quo(v, YoctoPerNEAR)
	if !v.IsInt64() || v.Int64() > int64(MaxTopUp) {
		return 0, fmt.Errorf("the amount is too large: one top-up adds at most $%d", int64(MaxTopUp/MicrosPerUSD))
	}
	return Micros(v.Int64()), nil
}

// NEARNumber marshals yoctoNEAR as a plain JSON number of NEAR, exactly.
type NEARNumber struct{ Yocto *big.Int }

// MarshalJSON writes the amount as a decimal number of NEAR without trailing zeros.
func (n NEARNumber) MarshalJSON() ([]byte, error) {
	if n.Yocto == nil || n.Yocto.Sign() == 0 {
		return []byte("0"), nil
	}
	q, r := new(big.Int).QuoRem(n.Yocto, YoctoPerNEAR, new(big.Int))
	s := q.String()
	if r.Sign() != 0 {
		frac := fmt.Sprintf("%024s", r.String())
		s += "." + strings.TrimRight(frac, "0")
	}
	return []byte(s), nil
}
