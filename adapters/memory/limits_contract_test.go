package memory_test

import (
	"testing"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

func TestRateLimiterContract(t *testing.T) {
	porttest.RateLimiterContract(t, func(_ *testing.T, clock ports.Clock) ports.RateLimiter {
		return memory.NewRateLimiter(clock)
	})
}

func TestSemaphoreContract(t *testing.T) {
	porttest.SemaphoreContract(t, func(_ *testing.T, clock ports.Clock) ports.Semaphore {
		return memory.NewSemaphore(clock)
	})
}
