package engine

import (
	"context"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/grovehq/grove/core/model"
)

// Metrics are the engine's Prometheus metrics. A nil *Metrics records
// nothing: an engine without them (tests) needs no checks.
type Metrics struct {
	actions      *prometheus.CounterVec
	duration     *prometheus.HistogramVec
	healthRounds prometheus.Counter
	restarts     prometheus.Counter
}

// NewMetrics makes the engine's metrics and registers them with reg.
func NewMetrics(reg prometheus.Registerer) *Metrics {
	m := &Metrics{
		actions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "grove_actions_total",
			Help: "Actions this agent ran to their end, by kind (CLUSTER_CREATE, NODE_CREATE...) and final status (SUCCEEDED, FAILED, CANCELLED).",
		}, []string{"action", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "grove_action_duration_seconds",
			Help: "Time from an action's start to its end, by kind and final status.",
			// From a node check (milliseconds) to a rolling update of a
			// large cluster (an hour, the default timeout).
			Buckets: []float64{.01, .05, .25, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600},
		}, []string{"action", "status"}),
		healthRounds: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "grove_health_rounds_total",
			Help: "Rounds of health checks this agent ran over the clusters it holds the health claim of.",
		}),
		restarts: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "grove_health_restarts_total",
			Help: "Dead nodes the restart supervisor submitted a restart (NODE_RECOVER) for.",
		}),
	}
	reg.MustRegister(m.actions, m.duration, m.healthRounds, m.restarts)
	return m
}

// finished records an action's end.
func (m *Metrics) finished(a *model.Action) {
	if m == nil {
		return
	}
	m.actions.WithLabelValues(a.Action, a.Status).Inc()
	if a.StartTime > 0 && a.EndTime >= a.StartTime {
		m.duration.WithLabelValues(a.Action, a.Status).Observe(a.EndTime - a.StartTime)
	}
}

func (m *Metrics) healthRound() {
	if m != nil {
		m.healthRounds.Inc()
	}
}

func (m *Metrics) restart() {
	if m != nil {
		m.restarts.Inc()
	}
}

// logKey is the context key of the logger of the action a context runs.
type logKey struct{}

// withActionLog gives ctx a logger whose every line names the action, its
// kind and its cluster, so an action's lines can be picked out of the
// agent's log (with log_format = "json", by field).
func (e *Engine) withActionLog(ctx context.Context, a *model.Action) context.Context {
	return context.WithValue(ctx, logKey{}, e.actionLog(a))
}

func (e *Engine) actionLog(a *model.Action) hclog.Logger {
	return e.log.With("action_id", a.ID, "action", a.Action, "cluster_id", a.ClusterID)
}

// batchLog is the logger of a batch of node actions: one action's own, or
// for several (one parent's, of one kind) the parent's id, whose lines an
// operator follows; each node action's end is logged with its own id.
func (e *Engine) batchLog(actions []*model.Action) hclog.Logger {
	a := actions[0]
	if len(actions) == 1 {
		return e.actionLog(a)
	}
	return e.log.With("parent_action_id", a.ParentID, "action", a.Action, "cluster_id", a.ClusterID, "batch", len(actions))
}

// logger is the logger of the action ctx runs, or the engine's.
func (e *Engine) logger(ctx context.Context) hclog.Logger {
	if l, ok := ctx.Value(logKey{}).(hclog.Logger); ok {
		return l
	}
	return e.log
}

// sinceStart is how long ago an action started, for its log line.
func sinceStart(a *model.Action, now time.Time) time.Duration {
	return now.Sub(time.UnixMicro(int64(a.StartTime * 1e6))).Round(time.Millisecond)
}
