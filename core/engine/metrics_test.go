package engine_test

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/grovehq/grove/core/engine"
)

// TestMetricsCountActions: a cluster's creation counts one CLUSTER_CREATE
// and one NODE_CREATE per node, all SUCCEEDED, each with its duration; each
// health round counts.
func TestMetricsCountActions(t *testing.T) {
	h := newIdleHarness(t, nil)
	reg := prometheus.NewRegistry()
	h.restart("", func(c *engine.Config) { c.Metrics = engine.NewMetrics(reg) })
	t.Cleanup(func() { h.eng.Stop() })
	h.profile("p")
	h.cluster("web", 2, 60)

	want := `
# HELP grove_actions_total Actions this agent ran to their end, by kind (CLUSTER_CREATE, NODE_CREATE...) and final status (SUCCEEDED, FAILED, CANCELLED).
# TYPE grove_actions_total counter
grove_actions_total{action="CLUSTER_CREATE",status="SUCCEEDED"} 1
grove_actions_total{action="NODE_CREATE",status="SUCCEEDED"} 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "grove_actions_total"); err != nil {
		t.Error(err)
	}
	if n, err := testutil.GatherAndCount(reg, "grove_action_duration_seconds"); err != nil || n != 2 {
		t.Errorf("grove_action_duration_seconds has %d series (%v), want one per kind and status: 2", n, err)
	}
	for range 2 {
		if err := h.eng.CheckHealth(h.ctx()); err != nil {
			t.Fatal(err)
		}
	}
	rounds := `
# HELP grove_health_rounds_total Rounds of health checks this agent ran over the clusters it holds the health claim of.
# TYPE grove_health_rounds_total counter
grove_health_rounds_total 2
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(rounds), "grove_health_rounds_total"); err != nil {
		t.Error(err)
	}
}
