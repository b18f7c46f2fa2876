package engine_test

import (
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/plugins/builtin/noop"
)

// globalConfig is a cluster config with the global topology.
func globalConfig(extra map[string]any) map[string]any {
	cfg := map[string]any{"grove.failover": map[string]any{"topology": "global"}}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

// globalRound runs one health round, which starts a global cluster's sync
// when its hosts changed, and waits for the cluster to have no action.
func (h *harness) globalRound(clusterID string) {
	h.t.Helper()
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		h.t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; {
		busy, err := h.store.ActiveActions(h.ctx(), clusterID)
		if err == nil && len(busy) == 0 {
			return
		}
		if time.Now().After(deadline) {
			h.t.Fatalf("after 20s: %d actions still running (%v)", len(busy), err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// onHosts says whether a global cluster has one node on each of want,
// none elsewhere, and a desired capacity of their count.
func (h *harness) onHosts(clusterID string, want ...string) {
	h.t.Helper()
	got := count(h.hostsOf(clusterID))
	ok := len(got) == len(want)
	for _, w := range want {
		ok = ok && got[w] == 1
	}
	if cl := h.getCluster(clusterID); !ok || cl.DesiredCapacity != len(want) {
		h.t.Fatalf("nodes per host %v, desired capacity %d; want one on each of %v", got, cl.DesiredCapacity, want)
	}
}

// TestGlobalDriverHosts: a global cluster of a driver with hosts
// (grove.noop's pretend hosts) follows the hosts the driver reports, as
// far as the attached placement policy's constraints allow: a host the
// driver stops reporting has its node shut down, one it reports again or
// anew gets a node.
func TestGlobalDriverHosts(t *testing.T) {
	t.Setenv(noop.HostsEnv, "h1 h2 h3:disk=hdd")
	h := newHarness(t, nil)
	h.profileOf("p", noop.TypeName, map[string]any{})
	cl := h.create(engine.ClusterCreate{Name: "everywhere", Profile: "p", Config: globalConfig(nil)})
	h.policy("no-hdd", "grove.policy.placement", "1.0", `{"constraints": "labels.disk != \"hdd\""}`)
	h.attach(cl, "no-hdd")
	h.globalRound(cl.ID)
	h.onHosts(cl.ID, "h1", "h2")

	t.Setenv(noop.HostsEnv, "h1 h3:disk=hdd")
	h.globalRound(cl.ID)
	h.onHosts(cl.ID, "h1")

	t.Setenv(noop.HostsEnv, "h1 h2 h3:disk=ssd h4")
	h.globalRound(cl.ID)
	h.onHosts(cl.ID, "h1", "h2", "h3", "h4")

	// Nothing changed: no action.
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	if busy, err := h.store.ActiveActions(h.ctx(), cl.ID); err != nil || len(busy) > 0 {
		t.Errorf("a round without host changes started %d actions (%v)", len(busy), err)
	}
}
