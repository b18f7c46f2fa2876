package agent

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// newRegistry is the agent's own metrics registry (never Prometheus's
// global one): the Go runtime's and the process's collectors, and what the
// store holds, counted at each scrape.
func newRegistry(st store.Store) *prometheus.Registry {
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
		&stateCollector{store: st})
	return reg
}

// observeStore wraps st so every call's latency is recorded in reg.
func observeStore(st store.Store, reg prometheus.Registerer) store.Store {
	h := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "grove_store_call_duration_seconds",
		Help:    "Time a call to the store took, by the store method (InTx for a whole transaction, which counts the calls inside it too).",
		Buckets: []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5},
	}, []string{"method"})
	reg.MustRegister(h)
	return store.Observe(st, func(method string, took time.Duration) { h.WithLabelValues(method).Observe(took.Seconds()) })
}

// stateCollector reports what the store holds when Prometheus scrapes:
// nodes by cluster and status, and the actions not yet ended. It asks the
// store, not this agent's memory, so every agent sharing a store reports
// the same numbers; aggregate them with max, not sum.
type stateCollector struct {
	store store.Store
}

var (
	nodesDesc = prometheus.NewDesc("grove_nodes", "Nodes by project, cluster name (\"\" for nodes in no cluster) and status, as the store holds them.",
		[]string{"project", "cluster", "status"}, nil)
	pendingDesc = prometheus.NewDesc("grove_actions_pending", "Actions not yet ended (INIT, WAITING, READY, RUNNING), by kind and status, as the store holds them.",
		[]string{"action", "status"}, nil)
	queueDesc = prometheus.NewDesc("grove_action_queue_depth", "Actions READY and waiting for a worker of any agent sharing the store.", nil, nil)
)

// scrapeTimeout bounds the store queries of one scrape.
const scrapeTimeout = 5 * time.Second

func (c *stateCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- nodesDesc
	ch <- pendingDesc
	ch <- queueDesc
}

func (c *stateCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), scrapeTimeout)
	defer cancel()
	nodes, err := c.store.NodeCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(nodesDesc, err)
	}
	for _, n := range nodes {
		ch <- prometheus.MustNewConstMetric(nodesDesc, prometheus.GaugeValue, float64(n.Count), n.Project, n.Cluster, n.Status)
	}
	actions, err := c.store.ActionCounts(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(pendingDesc, err)
		return
	}
	ready := 0
	for _, a := range actions {
		ch <- prometheus.MustNewConstMetric(pendingDesc, prometheus.GaugeValue, float64(a.Count), a.Action, a.Status)
		if a.Status == model.ActionReady {
			ready += a.Count
		}
	}
	ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(ready))
}
