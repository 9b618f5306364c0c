package toolkit_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petal-near/petal/adapters/memory"
	"github.com/petal-near/petal/app/toolkit"
	"github.com/petal-near/petal/ports"
	"github.com/petal-near/petal/ports/porttest"
)

// recordedMetrics keeps every counter and gauge by name and labels.
type recordedMetrics struct {
	mu     sync.Mutex
	values map[string]float64
}

type recordedMetric struct {
	m    *recordedMetrics
	name string
}

func (r recordedMetric) Add(d float64, labels ...string) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.m.values[r.name+"{"+strings.Join(labels, ",")+"}"] += d
}
func (r recordedMetric) Set(v float64, labels ...string) {
	r.m.mu.Lock()
	defer r.m.mu.Unlock()
	r.m.values[r.name+"{"+strings.Join(labels, ",")+"}"] = v
}
func (r recordedMetric) Observe(float64, ...string) {}

func (m *recordedMetrics) Counter(name, _ string, _ ...string) ports.Counter {
	return recordedMetric{m, name}
}
func (m *recordedMetrics) Gauge(name, _ string, _ ...string) ports.Gauge {
	return recordedMetric{m, name}
}
func (m *recordedMetrics) Histogram(name, _ string, _ []float64, _ ...string) ports.Histogram {
	return recordedMetric{m, name}
}
func (m *recordedMetrics) Observe(string, string, []string, func(context.Context, func(float64, ...string)) error) {
}

func (m *recordedMetrics) get(key string) float64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.values[key]
}

func TestLimitsAreCounted(t *testing.T) {
	m := &recordedMetrics{values: map[string]float64{}}
	clock := porttest.NewHandClock()
	l := toolkit.CountedRateLimiter(memory.NewRateLimiter(clock), m)
	for range 3 {
		_, _, _ = l.Allow(t.Context(), "tools:198.51.100.1", 2, time.Minute)
	}
	if got := m.get("petal_rate_limit_checks_total{tools,allowed}"); got != 2 {
		t.Fatalf("allowed: %v", got)
	}
	if got := m.get("petal_rate_limit_checks_total{tools,refused}"); got != 1 {
		t.Fatalf("refused: %v", got)
	}
	for k := range m.values {
		if strings.Contains(k, "198.51.100.1") {
			t.Fatalf("an address became a label: %s", k)
		}
	}
}
