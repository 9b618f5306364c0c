// Package retryafter reads an HTTP Retry-After header for the adapters that
// retry a busy provider (NEAR RPC, EVM RPC), so each honours it the same way.
package retryafter

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// Parse reads v: seconds, or an HTTP date (a date passed is 0). ok is false
// when v is absent or neither.
func Parse(v string) (wait time.Duration, ok bool) {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil && s >= 0 {
		return time.Duration(s) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(time.Until(t), 0), true
	}
	return 0, false
}
