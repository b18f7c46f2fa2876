package host

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/grpc"
	"google.golang.org/grpc/status"
)

// Metrics are the plugin host's Prometheus metrics. A nil *Metrics records
// nothing, so a host without them (tests, `grove plugin`) needs no checks.
type Metrics struct {
	calls    *prometheus.HistogramVec
	restarts *prometheus.CounterVec
}

// NewMetrics makes the host's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		calls: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "grove_plugin_call_duration_seconds",
			Help: "Time a gRPC call to a plugin took, by plugin, method (the RPC's name) and gRPC status code.",
			// Plugin calls range from a schema lookup (milliseconds) to a
			// batch of VMs (minutes).
			Buckets: []float64{.001, .005, .025, .1, .5, 1, 2.5, 5, 10, 30, 60, 120, 300},
		}, []string{"plugin", "method", "code"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grove_plugin_restarts_total",
			Help: "Times the host restarted a plugin process after it exited or stopped answering.",
		}, []string{"plugin"}),
	}
	reg.MustRegister(m.calls, m.restarts)
	return m
}

// SetMetrics makes the host record its metrics in m; call it before Start.
func (h *Host) SetMetrics(m *Metrics) { h.metrics = m }

func (m *Metrics) restarted(plugin string) {
	if m != nil {
		m.restarts.WithLabelValues(plugin).Inc()
	}
}

// interceptor times each unary call made on a plugin's connection. Streams
// (a driver's node events) last as long as the plugin and are not timed.
func (m *Metrics) interceptor(plugin string) grpc.UnaryClientInterceptor {
	return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		start := time.Now()
		err := invoker(ctx, method, req, reply, cc, opts...)
		m.calls.WithLabelValues(plugin, method, status.Code(err).String()).Observe(time.Since(start).Seconds())
		return err
	}
}
