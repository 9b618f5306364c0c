package ports

import "context"

// Metrics is where a component declares what it counts. The Prometheus
// adapter (adapters/metrics) implements it and serves the lot on
// PETAL_METRICS_ADDR; NoMetrics drops everything, for code built without it.
//
// To add metrics to a component: take a ports.Metrics (Wire provides one to
// any constructor that asks), declare each metric once in the constructor,
// keep the handle, and use it on the hot path:
//
//	ended := m.Counter("petal_sweep_runs_ended_total", "Runs a sweep ended, by how they ended.", "outcome")
//	…
//	ended.Add(1, "interrupted")
//
// Names follow Prometheus' rules: petal_ first, snake_case, _total on
// counters, the unit last (_seconds, _micros, _bytes). Label values must come
// from a small fixed set (a route pattern, a status, an outcome), never from
// what a stranger sends (a path, an address, an id). Declaring the same name
// twice gives back the first declaration when its kind and labels agree, and
// panics when they don't, so a clash shows at start-up.
type Metrics interface {
	// Counter is a number that only goes up (calls, errors, micro-dollars).
	Counter(name, help string, labels ...string) Counter
	// Gauge is a number that goes up and down (streams open, reads in flight).
	Gauge(name, help string, labels ...string) Gauge
	// Histogram counts observations into buckets (latencies in seconds).
	// nil buckets are the default latency buckets, 5 ms to 10 s.
	Histogram(name, help string, buckets []float64, labels ...string) Histogram
	// Observe declares a gauge read when the metrics are scraped, from state
	// that lives elsewhere (the pool's counts, runs by status in the
	// database). read emits one value per label set; it gets a context with a
	// short deadline, and an error leaves the gauge out of that scrape.
	Observe(name, help string, labels []string, read func(ctx context.Context, emit func(value float64, labelValues ...string)) error)
}

// Counter only goes up. labelValues match the declared labels, in order.
type Counter interface {
	Add(delta float64, labelValues ...string)
}

// Gauge goes up and down.
type Gauge interface {
	Add(delta float64, labelValues ...string)
	Set(value float64, labelValues ...string)
}

// Histogram observes values (seconds, for latencies).
type Histogram interface {
	Observe(value float64, labelValues ...string)
}

// NoMetrics records nothing: for tests and tools that build a component
// without a metrics listener.
type NoMetrics struct{}

var _ Metrics = NoMetrics{}

type noMetric struct{}

func (noMetric) Add(float64, ...string)     {}
func (noMetric) Set(float64, ...string)     {}
func (noMetric) Observe(float64, ...string) {}

// Counter implements Metrics.
func (NoMetrics) Counter(string, string, ...string) Counter { return noMetric{} }

// Gauge implements Metrics.
func (NoMetrics) Gauge(string, string, ...string) Gauge { return noMetric{} }

// Histogram implements Metrics.
func (NoMetrics) Histogram(string, string, []float64, ...string) Histogram { return noMetric{} }

// Observe implements Metrics.
func (NoMetrics) Observe(string, string, []string, func(context.Context, func(float64, ...string)) error) {
}

// MetricsOrNone is m, or NoMetrics when m is nil, so a component may be built
// without metrics (a test's hand-made Deps, say).
func MetricsOrNone(m Metrics) Metrics {
	if m == nil {
		return NoMetrics{}
	}
	return m
}
