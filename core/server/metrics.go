package server

import (
	"net/http"
	"net/http/pprof"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/grovehq/grove/core/engine"
)

// Metrics are the API's Prometheus metrics. A nil *Metrics records nothing.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	streams  prometheus.Gauge
}

// NewMetrics makes the API's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grove_api_requests_total",
			Help: "API requests answered, by route (the route table's pattern, such as \"GET /v1/clusters/{id}\"; \"unmatched\" for none) and HTTP status code.",
		}, []string{"route", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "grove_api_request_duration_seconds",
			Help:    "Time the API took to answer a request, by route. Streams (events?follow=true, the agent monitor) count their whole length.",
			Buckets: prometheus.DefBuckets,
		}, []string{"route"}),
	}
	m.streams = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "grove_api_streams_open",
		Help: "Event streams (events?follow=true) and log streams (the agent monitor) open now.",
	})
	reg.MustRegister(m.requests, m.duration, m.streams)
	return m
}

// streamsOpen adds n to the open streams.
func (m *Metrics) streamsOpen(n float64) {
	if m != nil {
		m.streams.Add(n)
	}
}

// observe records one answered request. The route is the pattern the mux
// matched, never the raw path: ids in paths would make a series per object.
func (m *Metrics) observe(r *http.Request, code int, took time.Duration) {
	if m == nil {
		return
	}
	route := r.Pattern
	if route == "" {
		route = "unmatched"
	}
	m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
	m.duration.WithLabelValues(route).Observe(took.Seconds())
}

// statusWriter remembers the status code a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.code = http.StatusOK
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the connection (flushes and
// deadlines of the streams).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// Flush implements http.Flusher for handlers that look for it (pprof).
func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// watchRoutes registers what operators watch an agent with: its metrics,
// its log stream and the Go profiler.
func (s *Server) watchRoutes() {
	if s.opts.Gatherer != nil {
		h := promhttp.HandlerFor(s.opts.Gatherer, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError})
		s.register("GET /metrics", operator, wrap(h))
	}
	s.admin("GET /v1/agent/monitor", s.monitor)
	// The profiler is on the API's listener, behind its TLS and an admin
	// token: a heap profile holds whatever the agent holds in memory,
	// secrets included, so it is never served without authorisation.
	s.admin("GET /debug/pprof/", wrap(http.HandlerFunc(pprof.Index)))
	s.admin("GET /debug/pprof/cmdline", wrap(http.HandlerFunc(pprof.Cmdline)))
	s.admin("GET /debug/pprof/profile", wrap(http.HandlerFunc(pprof.Profile)))
	s.admin("GET /debug/pprof/symbol", wrap(http.HandlerFunc(pprof.Symbol)))
	s.admin("POST /debug/pprof/symbol", wrap(http.HandlerFunc(pprof.Symbol)))
	s.admin("GET /debug/pprof/trace", wrap(http.HandlerFunc(pprof.Trace)))
}

func wrap(h http.Handler) handler {
	return func(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
		h.ServeHTTP(w, r)
		return nil
	}
}
