package memory

import "time"

// SystemClock is the real wall clock, in UTC.
type SystemClock struct{}

// Now implements ports.Clock.
func (SystemClock) Now() time.Time { return time.Now().UTC() }
