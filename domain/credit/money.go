// Package credit is money: integer micro-dollars, ledger entries, holds, the
// price and top-ups. Money is never a float here, in storage or in arithmetic.
package credit

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Micros is an amount of US dollars in millionths of a dollar.
type Micros int64

// MicrosPerUSD is one dollar.
const MicrosPerUSD Micros = 1_000_000

// ParseUSD reads a decimal dollar amount such as "3", "0.50" or "0.000001"
// exactly. More than six decimal places, signs other than a leading minus,
// exponents and overflow are refused.
func ParseUSD(s string) (Micros, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return 0, fmt.Errorf("empty amount")
	}
	neg := false
	if s[0] == '-' {
		neg = true
		s = s[1:]
	}
	whole, frac, hasDot := strings.Cut(s, ".")
	if whole == "" && (!hasDot || frac == "") {
		return 0, fmt.Errorf("%q is not a dollar amount", s)
	}
	if len(frac) > 6 {
		return 0, fmt.Errorf("%q has more than six decimal places", s)
	}
	for _, part := range []string{whole, frac} {
		for _, r := range part {
			if r < '0' || r > '9' {
				return 0, fmt.Errorf("%q is not a dollar amount", s)
			}
		}
	}
	var w int64
	if whole != "" {
		var err error
		w, err = strconv.ParseInt(whole, 10, 64)
		if err != nil || w > math.MaxInt64/int64(MicrosPerUSD)-1 {
			return 0, fmt.Errorf("%q is too large", s)
		}
	}
	f := int64(0)
	if frac != "" {
		padded := frac + strings.Repeat("0", 6-len(frac))
		f, _ = strconv.ParseInt(padded, 10, 64)
	}
	m := Micros(w)*MicrosPerUSD + Micros(f)
	if neg {
		m = -m
	}
	return m, nil
}

// String renders m as a dollar decimal with six places, such as "0.050000".
func (m Micros) String() string {
	sign := ""
	v := int64(m)
	if v < 0 {
		sign = "-"
		v = -v
	}
	return fmt.Sprintf("%s%d.%06d", sign, v/int64(MicrosPerUSD), v%int64(MicrosPerUSD))
}

// USD is m as a JSON number of dollars with up to six decimals, for answers
// whose contract shape is a number (left_usd, cost_usd). It is produced from the
// integer, so no float arithmetic ever touches the amount.
func (m Micros) USD() USDNumber { return USDNumber(m) }

// USDNumber marshals micro-dollars as a plain JSON number of dollars.
type USDNumber Micros

// MarshalJSON writes the amount as a decimal number without trailing zeros.
func (n USDNumber) MarshalJSON() ([]byte, error) {
	s := Micros(n).String()
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	if s == "" || s == "-" {
		s = "0"
	}
	return []byte(s), nil
}
