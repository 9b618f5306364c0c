package httpapi

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/petal-near/petal/ports"
)

// promMetrics is ports.Metrics on client_golang, as adapters/metrics does it
// (the same vectors, WithLabelValues then Observe or Add), for the benchmarks
// to pay what production pays; an adapter's tests never import another
// adapter, so the real one is not used here.
type promMetrics struct{ reg *prometheus.Registry }

func newPromMetrics() promMetrics { return promMetrics{reg: prometheus.NewRegistry()} }

type promCounter struct{ v *prometheus.CounterVec }

func (c promCounter) Add(d float64, lv ...string) { c.v.WithLabelValues(lv...).Add(d) }

type promGauge struct{ v *prometheus.GaugeVec }

func (g promGauge) Add(d float64, lv ...string) { g.v.WithLabelValues(lv...).Add(d) }
func (g promGauge) Set(x float64, lv ...string) { g.v.WithLabelValues(lv...).Set(x) }

type promHistogram struct{ v *prometheus.HistogramVec }

func (h promHistogram) Observe(x float64, lv ...string) { h.v.WithLabelValues(lv...).Observe(x) }

func (m promMetrics) Counter(name, help string, labels ...string) ports.Counter {
	v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
	m.reg.MustRegister(v)
	return promCounter{v}
}

func (m promMetrics) Gauge(name, help string, labels ...string) ports.Gauge {
	v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	m.reg.MustRegister(v)
	return promGauge{v}
}

func (m promMetrics) Histogram(name, help string, buckets []float64, labels ...string) ports.Histogram {
	if buckets == nil {
		buckets = prometheus.DefBuckets
	}
	v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
	m.reg.MustRegister(v)
	return promHistogram{v}
}

func (m promMetrics) Observe(string, string, []string, func(context.Context, func(float64, ...string)) error) {
}
