package engine_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/monitor"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/builtin/noop"
)

// failoverConfig is a failover cluster's settings with a 1s ready period
// and a 5s rejoin grace: the test's clock decides when a start happens,
// and, while the clock stands still, no host goes ready before it has
// seen every peer's instance (else the first agent to run its round
// could win the contest alone).
func failoverConfig(orchestrate string) map[string]any {
	return map[string]any{"grove.failover": map[string]any{"topology": "failover", "orchestrate": orchestrate,
		"ready_period": "1s", "rejoin_grace_period": "5s"}}
}

// driverHostOf is the host a driver's node is on: the one the driver
// recorded (data.host), else its placement host.
func driverHostOf(n *model.Node) string {
	if h, _ := n.Data["host"].(string); h != "" {
		return h
	}
	pl, _ := n.Data["placement"].(map[string]any)
	h, _ := pl["host"].(string)
	return h
}

// driverUp lists the hosts of a cluster's ACTIVE nodes, and every node as
// "host status".
func (h *harness) driverUp(clusterID string) (up, all []string) {
	for _, n := range h.nodes(clusterID) {
		all = append(all, driverHostOf(n)+" "+n.Status)
		if n.Status == model.NodeActive {
			up = append(up, driverHostOf(n))
		}
	}
	return up, all
}

// TestFailoverDriverHosts: a failover cluster (orchestrate ha) of a driver
// that is not host-local (grove.noop's pretend hosts h1, h2, h3) runs on
// the hosts the driver reports, the agent holding the health claim running
// each host's monitor: the leader h1 goes ready and starts only after the
// ready period, its node placed on h1; when the driver stops reporting h1,
// h2 takes over and h1's node is deleted through the driver (it has no
// agent host, so nothing merely forgets it), one instance up; when h1 is
// back, nothing moves.
func TestFailoverDriverHosts(t *testing.T) {
	t.Setenv(noop.HostsEnv, "h1 h2 h3")
	h := newHarness(t, nil)
	h.profileOf("p", noop.TypeName, map[string]any{})
	two := 2
	if _, _, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "sized", Profile: "p", DesiredCapacity: &two, Config: failoverConfig("ha")}); err == nil ||
		!strings.Contains(err.Error(), "desired_capacity") || !strings.Contains(err.Error(), "grove.noop") {
		t.Errorf("a grove.noop failover cluster created with desired_capacity 2: %v, want a refusal naming the field and the profile type", err)
	}
	// A driver with no hosts to list (test.gate has no Hosts hook) cannot
	// run one: refused, naming the setting and the type.
	h.profileOf("gate", "test.gate", map[string]any{})
	if _, _, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "nohosts", Profile: "gate", Config: failoverConfig("ha")}); err == nil ||
		!strings.Contains(err.Error(), "grove.failover.topology") || !strings.Contains(err.Error(), "test.gate") {
		t.Errorf("a failover cluster of test.gate: %v, want a refusal naming grove.failover.topology and test.gate", err)
	}
	cl := h.create(engine.ClusterCreate{Name: "fo", Profile: "p", Config: failoverConfig("ha")})

	// The leader announces its start; the clock stands still, so nothing
	// starts however many rounds run.
	for range 5 {
		h.globalRound(cl.ID)
	}
	rows := h.instanceRows(cl.ID)
	if len(rows) != 3 || rows["h1"].State != monitor.Ready || rows["h2"].State != monitor.Idle || rows["h3"].State != monitor.Idle {
		t.Fatalf("instances %v; want h1 ready, h2 and h3 idle", rowStates(rows))
	}
	if n := h.nodes(cl.ID); len(n) != 0 {
		t.Fatalf("%d nodes before the ready period passed; want none", len(n))
	}

	// Past the ready period h1 starts: one node, placed on h1.
	h.clock.advance(1100 * time.Millisecond)
	waitFor(t, 20*time.Second, func() (bool, string) {
		h.globalRound(cl.ID)
		up, all := h.driverUp(cl.ID)
		rows := h.instanceRows(cl.ID)
		return fmt.Sprint(up) == "[h1]" && len(all) == 1 && rows["h1"].State == monitor.Idle && h.getCluster(cl.ID).DesiredCapacity == 1,
			fmt.Sprintf("nodes %v, instances %v, desired %d", all, rowStates(rows), h.getCluster(cl.ID).DesiredCapacity)
	})
	old := h.nodes(cl.ID)[0]
	if pl, _ := old.Data["placement"].(map[string]any); pl["host"] != "h1" || old.Host != "" {
		t.Errorf("the node's placement %v and agent host %q; want placed on h1, on no agent host", old.Data["placement"], old.Host)
	}
	if got := h.instanceView(cl); got["h1"] != "up idle L" || got["h2"] != "down idle -" || got["h3"] != "down idle -" {
		t.Errorf("instances %v; want h1 up idle L, h2 and h3 down idle", got)
	}

	// The driver stops reporting h1: h2, next in rank, goes ready, starts
	// after its ready period, and h1's node is deleted.
	t.Setenv(noop.HostsEnv, "h2 h3")
	waitFor(t, 20*time.Second, func() (bool, string) {
		h.globalRound(cl.ID)
		rows := h.instanceRows(cl.ID)
		return rows["h2"].State == monitor.Ready, fmt.Sprintf("instances %v, want h2 ready", rowStates(rows))
	})
	h.clock.advance(1100 * time.Millisecond)
	waitFor(t, 20*time.Second, func() (bool, string) {
		h.globalRound(cl.ID)
		up, all := h.driverUp(cl.ID)
		rows := h.instanceRows(cl.ID)
		return fmt.Sprint(up) == "[h2]" && len(all) == 1 && rows["h2"].State == monitor.Idle && h.getCluster(cl.ID).DesiredCapacity == 1,
			fmt.Sprintf("nodes %v, instances %v, desired %d", all, rowStates(rows), h.getCluster(cl.ID).DesiredCapacity)
	})
	if _, err := h.store.GetNode(h.ctx(), old.ID); err == nil {
		t.Errorf("h1's node %s is still in the store after the takeover", old.Name)
	}
	evs, err := h.store.ListEvents(h.ctx(), store.ListOpts{Project: caller.Project})
	if err != nil {
		t.Fatal(err)
	}
	var said, deleted bool
	for _, ev := range evs {
		if ev.OID != old.ID {
			continue
		}
		said = said || strings.Contains(ev.StatusReason, "is deleted: its host h1")
		// Its NODE_DELETE ran on a node with no agent host, which the
		// engine hands to the driver (only another agent host's node is
		// forgotten without a call).
		deleted = deleted || (ev.Action == model.NodeDeleteAction && ev.Status == "end" && ev.Level == model.LevelInfo)
	}
	if !said || !deleted {
		t.Errorf("h1's node: an event saying it is deleted %v, its NODE_DELETE ended %v; want both", said, deleted)
	}

	// h1 is back: the cluster is up on h2, so nothing moves.
	t.Setenv(noop.HostsEnv, "h1 h2 h3")
	for range 3 {
		h.globalRound(cl.ID)
		h.clock.advance(1100 * time.Millisecond)
	}
	if up, all := h.driverUp(cl.ID); fmt.Sprint(up) != "[h2]" || len(all) != 1 {
		t.Errorf("nodes %v with h1 back; want h2's only", all)
	}
	if r := h.instanceRows(cl.ID)["h1"]; r.State != monitor.Idle || !strings.Contains(r.Reason, "up on h2") {
		t.Errorf("h1's instance with h1 back is %q (%s); want idle, the cluster being up on h2", r.State, r.Reason)
	}
}
