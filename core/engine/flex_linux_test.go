package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/monitor"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// flexConfig is a flex cluster's settings (orchestrate ha) with a 1s
// ready period and a 5s rejoin grace, as failoverConfig.
func flexConfig(target int) map[string]any {
	return map[string]any{"grove.failover": map[string]any{"topology": "flex", "orchestrate": "ha", "flex_target": float64(target), // numbers as the API decodes them
		"ready_period": "1s", "rejoin_grace_period": "5s"}}
}

// passReady moves the clock past the 1s ready period when an instance
// went ready at the clock's present time, so the test's standing clock
// lets one contest end per ready instance; it is called from waitFor
// conditions.
func (h *harness) passReady(clusterID string) {
	h.t.Helper()
	now := h.clock.Now()
	for _, r := range h.instanceRows(clusterID) {
		if r.State == monitor.Ready && now.Sub(r.Since) < time.Second {
			h.clock.advance(1100 * time.Millisecond)
			return
		}
	}
}

// advanceBeating moves the clock by d and waits until every live host
// heartbeated at the new time, so none of them goes down meanwhile.
func (h *harness) advanceBeating(t *testing.T, d time.Duration, live ...string) {
	t.Helper()
	h.clock.advance(d)
	now := h.clock.Now().Truncate(time.Microsecond)
	waitFor(t, 10*time.Second, func() (bool, string) {
		for _, name := range live {
			hs, err := h.store.GetHost(h.ctx(), name)
			if err != nil || hs.Heartbeat.Before(now) {
				return false, fmt.Sprintf("host %s has not heartbeated since the clock moved (%v)", name, err)
			}
		}
		return true, ""
	})
}

// flexSettled says whether a cluster's ACTIVE nodes are on exactly the
// hosts want (sorted), it has no other node, every instance is at rest
// (idle) and its desired capacity follows.
func (h *harness) flexSettled(clusterID string, want ...string) (bool, string) {
	h.passReady(clusterID)
	var active, all []string
	for _, n := range h.nodes(clusterID) {
		all = append(all, n.Host+" "+n.Status)
		if n.Status == model.NodeActive {
			active = append(active, n.Host)
		}
	}
	slices.Sort(active)
	rows := h.instanceRows(clusterID)
	rest := true
	for _, r := range rows {
		rest = rest && r.State == monitor.Idle
	}
	cl := h.getCluster(clusterID)
	return slices.Equal(active, want) && len(all) == len(want) && rest && cl.DesiredCapacity == len(want),
		fmt.Sprintf("nodes %v, want ACTIVE on %v only; desired %d; instances %v", all, want, cl.DesiredCapacity, rowStates(rows))
}

// TestFlexClusterMonitor: a flex cluster (flex_target 2, orchestrate ha)
// over three agent hosts runs one instance on each of the two best-ranked
// hosts, and refuses a manual resize; when one of them goes down, the
// third host starts one and the down host's node is forgotten; with
// flex_target lowered to 1, the worst-ranked instance stops.
func TestFlexClusterMonitor(t *testing.T) {
	h := newIdleHarness(t, nil)
	seen := h.killAtEnd()
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	_, bStore := h.hostEngine("engine-b", "b")
	h.hostEngine("engine-c", "c")
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	cl := h.create(engine.ClusterCreate{Name: "flex", Profile: "proc", Config: flexConfig(2)})

	// flex_target instances, on the default placement's first two hosts.
	waitFor(t, 60*time.Second, func() (bool, string) {
		seen(cl.ID)
		return h.flexSettled(cl.ID, "a", "b")
	})
	if got := h.instanceView(cl); got["a"] != "up idle L" || got["b"] != "up idle -" || got["c"] != "down idle -" {
		t.Errorf("instances %v; want a and b up idle (a leads), c down idle", got)
	}
	// c stays put: two are up.
	for range 5 {
		if err := a.CheckHealth(h.ctx()); err != nil {
			t.Fatal(err)
		}
	}
	if r := h.instanceRows(cl.ID)["c"]; r.State != monitor.Idle || !strings.Contains(r.Reason, "flex_target 2") {
		t.Errorf("c's instance is %q (%s) with two up; want idle, saying flex_target 2 are up", r.State, r.Reason)
	}
	// Its size is the monitors'.
	if _, err := h.act(cl, `{"scale_out": {"count": 1}}`); err == nil || !strings.Contains(err.Error(), "flex cluster") {
		t.Errorf("scale_out on a flex cluster: %v, want a refusal saying it is a flex cluster", err)
	}
	two := 2
	if _, _, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "sized", Profile: "proc", DesiredCapacity: &two, Config: flexConfig(2)}); err == nil ||
		!strings.Contains(err.Error(), "desired_capacity") || !strings.Contains(err.Error(), "topology flex") {
		t.Errorf("a flex cluster created with desired_capacity 2: %v, want a refusal naming the field and the topology", err)
	}

	// b's agent dies and its host goes down: c starts an instance in its
	// place, and b's node is forgotten.
	bStore.kill()
	h.downAfterHeartbeats(t, "b", "a", "c")
	waitFor(t, 60*time.Second, func() (bool, string) {
		seen(cl.ID)
		return h.flexSettled(cl.ID, "a", "c")
	})
	if got := h.instanceView(cl); got["b"] != "n/a idle -" || got["c"] != "up idle -" {
		t.Errorf("instances %v after b went down; want b n/a, c up idle", got)
	}

	// flex_target 1: one instance too many; the worst-ranked (c) stops.
	_, up, err := h.eng.UpdateCluster(h.ctx(), caller, cl.ID, engine.ClusterUpdate{Config: flexConfig(1)})
	h.ok(up, err)
	var stopped bool
	waitFor(t, 60*time.Second, func() (bool, string) {
		if r := h.instanceRows(cl.ID)["c"]; r != nil && (r.State == monitor.Stopping || r.State == monitor.Stopped) {
			stopped = true
		}
		return h.flexSettled(cl.ID, "a")
	})
	if !stopped {
		t.Errorf("c's instance never went stopping or stopped on its way down")
	}
	if got := h.instanceView(cl); got["a"] != "up idle L" || got["c"] != "down idle -" {
		t.Errorf("instances %v with flex_target 1; want a up idle L, c down idle", got)
	}
}

// TestFailoverMaintenanceGrace: the leader's agent stops cleanly, so its
// host is in maintenance: during the cluster's maintenance grace its
// peers keep its last state (its instance still counts as up) and take
// nothing over, however long past the heartbeat timeout; once the grace
// has expired, the next host takes over as after a failure.
func TestFailoverMaintenanceGrace(t *testing.T) {
	h := newIdleHarness(t, nil)
	seen := h.killAtEnd()
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	b, _ := h.hostEngine("engine-b", "b")
	c, _ := h.hostEngine("engine-c", "c")
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	cfg := failoverConfig("ha")
	cfg["grove.failover"].(map[string]any)["maintenance_grace_period"] = "30s"
	cl := h.create(engine.ClusterCreate{Name: "fm", Profile: "proc", Config: cfg})
	waitFor(t, 60*time.Second, func() (bool, string) {
		seen(cl.ID)
		return h.flexSettled(cl.ID, "a")
	})

	// a stops cleanly: maintenance.
	a.Stop()
	h.eng = b
	if hs, _ := h.store.GetHost(h.ctx(), "a"); hs.State != model.HostMaintenance {
		t.Fatalf("host a after a clean stop is %s, want maintenance", hs.State)
	}
	// 24s of silence: past the 10s heartbeat timeout, within the grace.
	for range 4 {
		h.advanceBeating(t, 6*time.Second, "b", "c")
		for _, e := range []*engine.Engine{b, c} {
			if err := e.CheckHealth(h.ctx()); err != nil {
				t.Fatal(err)
			}
		}
		rows := h.instanceRows(cl.ID)
		for _, host := range []string{"b", "c"} {
			if r := rows[host]; r.State != monitor.Idle || !strings.Contains(r.Reason, "up on a") {
				t.Fatalf("during a's maintenance grace, %s's instance is %q (%s); want idle, the cluster being up on a", host, r.State, r.Reason)
			}
		}
		if got := h.byHost(cl.ID); fmt.Sprint(got) != "map[a:1]" {
			t.Fatalf("nodes per host %v during a's maintenance grace; want a's one only", got)
		}
		if hs, _ := h.store.GetHost(h.ctx(), "a"); hs.State != model.HostMaintenance {
			t.Fatalf("host a is %s during its grace, want maintenance", hs.State)
		}
	}
	if got := h.instanceView(cl); got["a"] != "up idle L" {
		t.Errorf("a's instance during the grace is %q, want its last state kept: up idle", got["a"])
	}
	// The peers' rounds armed a wake for the grace's end: the takeover
	// waits for no check interval.
	hs, err := h.store.GetHost(h.ctx(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if end := hs.Heartbeat.Add(30 * time.Second); !b.WakesArmed(end) || !c.WakesArmed(end) {
		t.Errorf("no wake armed for the end of a's maintenance grace (%s): b %v, c %v", end, b.WakesArmed(end), c.WakesArmed(end))
	}

	// Past the grace, b takes over; a's node stays, its host being only
	// in maintenance (its process may still run).
	h.advanceBeating(t, 7*time.Second, "b", "c")
	waitFor(t, 60*time.Second, func() (bool, string) {
		seen(cl.ID)
		h.passReady(cl.ID)
		up := h.activeOn(cl.ID, "b", "c")
		rows := h.instanceRows(cl.ID)
		return fmt.Sprint(up) == "[b]" && rows["b"].State == monitor.Idle, fmt.Sprintf("active on %v among b and c, instances %v", up, rowStates(rows))
	})
	if got := h.instanceView(cl); !strings.HasPrefix(got["a"], "n/a ") || got["b"] != "up idle -" {
		t.Errorf("instances %v after the grace; want a n/a (no data), b up idle", got)
	}
}
