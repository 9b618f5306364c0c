// Package metrics is the Prometheus adapter of ports.Metrics: it keeps every
// metric petal's components declare in one registry (with the Go runtime's and
// the process's own), and serves them, with pprof, on a listener of its own
// (PETAL_METRICS_ADDR), never on the public one.
package metrics

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/petal-near/petal/ports"
)

// Registry implements ports.Metrics on a Prometheus registry of its own (not
// the global one), so each wired service, a test's among them, starts empty.
type Registry struct {
	reg *prometheus.Registry

	mu       sync.Mutex
	declared map[string]declaration

	readErrors *prometheus.CounterVec
}

type declaration struct {
	kind   string
	labels []string
	metric any
}

var _ ports.Metrics = (*Registry)(nil)

// New makes an empty registry holding the Go runtime's and the process's
// metrics (go_*, process_*).
func New() *Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	r := &Registry{reg: reg, declared: map[string]declaration{}}
	r.readErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "petal_metrics_read_errors_total",
		Help: "Scrape-time reads (ports.Metrics.Observe) that failed, by metric; the metric is left out of that scrape.",
	}, []string{"metric"})
	reg.MustRegister(r.readErrors)
	return r
}

// Gatherer is what the /metrics handler reads.
func (r *Registry) Gatherer() prometheus.Gatherer { return r.reg }

// declare returns the metric already declared under name, or registers the
// one make builds. A second declaration with another kind or other labels is
// a programming error, shown at start-up.
func (r *Registry) declare(kind, name string, labels []string, make func() (prometheus.Collector, any)) any {
	r.mu.Lock()
	defer r.mu.Unlock()
	if d, ok := r.declared[name]; ok {
		if d.kind != kind || !slices.Equal(d.labels, labels) {
			panic(fmt.Sprintf("metrics: %s declared as %s%v and again as %s%v", name, d.kind, d.labels, kind, labels))
		}
		return d.metric
	}
	c, m := make()
	r.reg.MustRegister(c)
	r.declared[name] = declaration{kind: kind, labels: slices.Clone(labels), metric: m}
	return m
}

// Counter implements ports.Metrics.
func (r *Registry) Counter(name, help string, labels ...string) ports.Counter {
	return r.declare("counter", name, labels, func() (prometheus.Collector, any) {
		v := prometheus.NewCounterVec(prometheus.CounterOpts{Name: name, Help: help}, labels)
		return v, counter{v, newChildren(v.WithLabelValues)}
	}).(counter)
}

// Gauge implements ports.Metrics.
func (r *Registry) Gauge(name, help string, labels ...string) ports.Gauge {
	return r.declare("gauge", name, labels, func() (prometheus.Collector, any) {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
		return v, gauge{v, newChildren(v.WithLabelValues)}
	}).(gauge)
}

// Histogram implements ports.Metrics.
func (r *Registry) Histogram(name, help string, buckets []float64, labels ...string) ports.Histogram {
	if buckets == nil {
		buckets = prometheus.DefBuckets
	}
	return r.declare("histogram", name, labels, func() (prometheus.Collector, any) {
		v := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: name, Help: help, Buckets: buckets}, labels)
		return v, histogram{v, newChildren(v.WithLabelValues)}
	}).(histogram)
}

// Observe implements ports.Metrics.
func (r *Registry) Observe(name, help string, labels []string, read func(ctx context.Context, emit func(value float64, labelValues ...string)) error) {
	r.declare("observed", name, labels, func() (prometheus.Collector, any) {
		c := &observed{desc: prometheus.NewDesc(name, help, labels, nil), name: name, read: read, errors: r.readErrors}
		return c, c
	})
}

// children finds a vector's child for its label values once: client_golang
// validates and hashes the values on every WithLabelValues, which on a cheap
// request's path (the request histogram, the in-flight gauge, the limiter's
// counters) cost as much as the rest of the counting. Up to three values key
// a map without allocating; more go to client_golang every time.
type children[T any] struct {
	m   *sync.Map // [3]string -> T
	get func(labelValues ...string) T
}

func newChildren[T any](get func(labelValues ...string) T) children[T] {
	return children[T]{m: &sync.Map{}, get: get}
}

func (c children[T]) of(labelValues []string) T {
	if len(labelValues) > 3 {
		return c.get(labelValues...)
	}
	var key [3]string
	copy(key[:], labelValues)
	if v, ok := c.m.Load(key); ok {
		return v.(T)
	}
	v := c.get(labelValues...)
	c.m.Store(key, v)
	return v
}

type counter struct {
	v  *prometheus.CounterVec
	of children[prometheus.Counter]
}

func (c counter) Add(delta float64, labelValues ...string) {
	c.of.of(labelValues).Add(delta)
}

type gauge struct {
	v  *prometheus.GaugeVec
	of children[prometheus.Gauge]
}

func (g gauge) Add(delta float64, labelValues ...string) {
	g.of.of(labelValues).Add(delta)
}
func (g gauge) Set(value float64, labelValues ...string) {
	g.of.of(labelValues).Set(value)
}

type histogram struct {
	v  *prometheus.HistogramVec
	of children[prometheus.Observer]
}

func (h histogram) Observe(value float64, labelValues ...string) {
	h.of.of(labelValues).Observe(value)
}

// observeTimeout bounds one scrape-time read, so a slow database never hangs
// a scrape.
const observeTimeout = 2 * time.Second

// observed is a gauge family read at scrape time.
type observed struct {
	desc   *prometheus.Desc
	name   string
	read   func(ctx context.Context, emit func(value float64, labelValues ...string)) error
	errors *prometheus.CounterVec
}

func (o *observed) Describe(ch chan<- *prometheus.Desc) { ch <- o.desc }

func (o *observed) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), observeTimeout)
	defer cancel()
	var got []prometheus.Metric
	var bad error
	err := o.read(ctx, func(value float64, labelValues ...string) {
		m, err := prometheus.NewConstMetric(o.desc, prometheus.GaugeValue, value, labelValues...)
		if err != nil {
			bad = err // label values that do not match the declared labels
			return
		}
		got = append(got, m)
	})
	if err != nil || bad != nil {
		o.errors.WithLabelValues(o.name).Inc()
		return
	}
	for _, m := range got {
		ch <- m
	}
}
