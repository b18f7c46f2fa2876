package engine_test

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// globalHarness starts host a's engine as the harness's engine and
// records every process a node started, to kill them at the end.
func globalHarness(t *testing.T) (*harness, func(clusterID string)) {
	h := newIdleHarness(t, nil)
	started := map[int]bool{}
	var mu sync.Mutex
	t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		killAll(t, slices.Collect(maps.Keys(started)))
	})
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	seen := func(clusterID string) {
		for _, n := range h.nodes(clusterID) {
			if pid, ok := n.Data["pid"].(float64); ok {
				mu.Lock()
				started[int(pid)] = true
				mu.Unlock()
			}
		}
	}
	return h, seen
}

// followsHosts says whether a global cluster settled on one node per host
// of want and its desired capacity is their count.
func (h *harness) followsHosts(clusterID string, want ...string) (bool, string) {
	m := map[string]int{}
	for _, w := range want {
		m[w] = 1
	}
	if ok, why := h.settledOn(clusterID, m); !ok {
		return false, why
	}
	if got := h.getCluster(clusterID).DesiredCapacity; got != len(want) {
		return false, fmt.Sprintf("desired capacity %d, want %d", got, len(want))
	}
	return true, ""
}

// TestGlobalClusterFollowsHosts: a cluster whose grove.failover topology
// is global runs one node per eligible agent host and its desired capacity
// follows them: a host that appears gets a node; a drained host's node is
// shut down and not replaced elsewhere, and comes back once the host is
// active again; a host whose heartbeat stops has its node removed, not
// replaced; a manual resize is refused; an update goes host by host.
func TestGlobalClusterFollowsHosts(t *testing.T) {
	h, seen := globalHarness(t)
	h.hostEngine("engine-b", "b")
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	h.profileOf("proc2", process.TypeName, map[string]any{"command": []any{"sleep", "601"}, "stop_timeout": 0})
	cl := h.create(engine.ClusterCreate{Name: "everywhere", Profile: "proc",
		Config: globalConfig(map[string]any{"grove.update": map[string]any{"parallelism": float64(3), "monitor": "10ms"}})})
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "b") })
	seen(cl.ID)

	// Its size is the hosts', not an operator's.
	for _, body := range []string{`{"scale_out": {"count": 1}}`, `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 5}}`} {
		if _, err := h.act(cl, body); err == nil || !strings.Contains(err.Error(), "is global") {
			t.Errorf("%s on a global cluster: %v, want a refusal saying it is global", body, err)
		}
	}
	five := 5
	if _, _, err := h.eng.UpdateCluster(h.ctx(), caller, cl.ID, engine.ClusterUpdate{DesiredCapacity: &five}); err == nil || !strings.Contains(err.Error(), "is global") {
		t.Errorf("an update of desired_capacity: %v, want a refusal", err)
	}
	if _, _, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "sized", Profile: "proc", DesiredCapacity: &five, Config: globalConfig(nil)}); err == nil ||
		!strings.Contains(err.Error(), "desired_capacity") {
		t.Errorf("a global cluster created with desired_capacity 5: %v, want a refusal naming the field", err)
	}

	// A host appears: it gets a node.
	_, cStore := h.hostEngine("engine-c", "c")
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "b", "c") })
	seen(cl.ID)

	// Drained, b's node is shut down and not replaced on a or c.
	drain, active := model.HostDrain, model.HostActive
	if _, err := h.eng.UpdateHost(h.ctx(), "b", engine.HostUpdate{Availability: &drain}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "c") })
	// Active again, it gets a node again.
	if _, err := h.eng.UpdateHost(h.ctx(), "b", engine.HostUpdate{Availability: &active}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "b", "c") })
	seen(cl.ID)

	// An update goes host by host, whatever grove.update's parallelism.
	stop := make(chan struct{})
	most := 0
	var sampler sync.WaitGroup
	sampler.Add(1)
	go func() {
		defer sampler.Done()
		for {
			select {
			case <-stop:
				return
			case <-time.After(2 * time.Millisecond):
			}
			nodes, err := h.store.ClusterNodes(h.ctx(), cl.ID)
			if err != nil {
				continue
			}
			n := 0
			for _, x := range nodes {
				if x.Status == model.NodeUpdating {
					n++
				}
			}
			most = max(most, n)
		}
	}()
	p2 := "proc2"
	_, upd, err := h.eng.UpdateCluster(h.ctx(), caller, cl.ID, engine.ClusterUpdate{Profile: &p2})
	h.ok(upd, err)
	close(stop)
	sampler.Wait()
	if most != 1 {
		t.Errorf("at most %d nodes were updating at once; want 1 (host by host)", most)
	}
	prof, err := h.store.FindProfile(h.ctx(), caller.Project, "proc2")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range h.nodes(cl.ID) {
		if n.ProfileID != prof.ID {
			t.Errorf("node %s on %s has profile %s after the update", n.Name, n.Host, n.ProfileID)
		}
	}
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "b", "c") })
	seen(cl.ID)

	// c's agent dies: once c is down its node is removed, not replaced.
	cStore.kill()
	h.downAfterHeartbeats(t, "c", "a", "b")
	waitFor(t, 30*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "b") })
	seen(cl.ID)
}

// TestGlobalNodeOnHostGoneDown: a host known but without a running agent
// gets a node that waits for it; once the host is down, that new node is
// shut down, not placed elsewhere, and the cluster keeps one node on each
// live host.
func TestGlobalNodeOnHostGoneDown(t *testing.T) {
	h, seen := globalHarness(t)
	if err := h.store.ReportHost(h.ctx(), &model.Host{Name: "d", Kind: model.HostAgent, State: model.HostUp, Heartbeat: h.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	cl := h.create(engine.ClusterCreate{Name: "everywhere", Profile: "proc", Config: globalConfig(nil)})
	waitFor(t, 20*time.Second, func() (bool, string) {
		got := h.byHost(cl.ID)
		return got["a"] == 1 && got["d"] == 1, fmt.Sprintf("nodes per host %v, want one on a and one waiting on d", got)
	})
	seen(cl.ID)
	h.downAfterHeartbeats(t, "d", "a")
	waitFor(t, 30*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a") })
	seen(cl.ID)
}

// TestGlobalPlacementConstraints: a bound placement policy's constraints
// decide which hosts are eligible: a host that stops matching them has
// its node shut down.
func TestGlobalPlacementConstraints(t *testing.T) {
	h, seen := globalHarness(t)
	h.hostEngine("engine-b", "b")
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	for _, name := range []string{"a", "b"} {
		labels := map[string]string{"disk": "ssd"}
		if _, err := h.eng.UpdateHost(h.ctx(), name, engine.HostUpdate{Labels: &labels}); err != nil {
			t.Fatal(err)
		}
	}
	cl := h.create(engine.ClusterCreate{Name: "everywhere", Profile: "proc", Config: globalConfig(nil)})
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "b") })
	h.policy("ssd", "grove.policy.placement", "1.0", `{"constraints": "labels.disk == \"ssd\""}`)
	h.attach(cl, "ssd")
	seen(cl.ID)
	labels := map[string]string{"disk": "hdd"}
	if _, err := h.eng.UpdateHost(h.ctx(), "a", engine.HostUpdate{Labels: &labels}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "b") })
}

// downAfterHeartbeats moves the clock past the heartbeat timeout in two
// steps, waiting after the first for every live host to heartbeat again,
// so only the silent host goes down.
func (h *harness) downAfterHeartbeats(t *testing.T, silent string, live ...string) {
	t.Helper()
	for range 2 {
		h.clock.advance(6 * time.Second)
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
	waitFor(t, 20*time.Second, func() (bool, string) {
		hs, _ := h.store.GetHost(h.ctx(), silent)
		return hs.State == model.HostDown, fmt.Sprintf("host %s is %s, want down", silent, hs.State)
	})
}

// TestGlobalPausedHostFailedNode: a paused host keeps its node, but once
// that node fails it is shut down, not restarted and not replaced, and
// the cluster's desired capacity drops with it; back to active, the host
// gets a new node.
func TestGlobalPausedHostFailedNode(t *testing.T) {
	h, seen := globalHarness(t)
	h.hostEngine("engine-b", "b")
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	// Restarts are immediate: only the paused host stops one.
	cl := h.create(engine.ClusterCreate{Name: "everywhere", Profile: "proc", Config: globalConfig(map[string]any{"grove.restart": map[string]any{"delay": "0s"}})})
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "b") })
	seen(cl.ID)
	pause, active := model.HostPause, model.HostActive
	if _, err := h.eng.UpdateHost(h.ctx(), "b", engine.HostUpdate{Availability: &pause}); err != nil {
		t.Fatal(err)
	}
	var onB *model.Node
	for _, n := range h.nodes(cl.ID) {
		if n.Host == "b" {
			onB = n
		}
	}
	if ok, why := h.followsHosts(cl.ID, "a", "b"); !ok {
		t.Fatalf("after pausing b: %s; want its node kept", why)
	}
	if err := syscall.Kill(-int(onB.Data["pid"].(float64)), syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a") })
	if _, err := h.store.GetNode(h.ctx(), onB.ID); err == nil {
		t.Errorf("the failed node %s of paused host b is still there", onB.Name)
	}
	if _, err := h.eng.UpdateHost(h.ctx(), "b", engine.HostUpdate{Availability: &active}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "b") })
	seen(cl.ID)
}

// TestGlobalFromReplicated: a replicated cluster made global by a config
// update keeps one node per host: the extra nodes go, and its desired
// capacity becomes the host count.
func TestGlobalFromReplicated(t *testing.T) {
	h, seen := globalHarness(t)
	h.hostEngine("engine-b", "b")
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	three := 3
	cl := h.create(engine.ClusterCreate{Name: "was-replicated", Profile: "proc", DesiredCapacity: &three})
	seen(cl.ID)
	_, upd, err := h.eng.UpdateCluster(h.ctx(), caller, cl.ID, engine.ClusterUpdate{Config: globalConfig(nil)})
	h.ok(upd, err)
	waitFor(t, 20*time.Second, func() (bool, string) { return h.followsHosts(cl.ID, "a", "b") })
	seen(cl.ID)
}
