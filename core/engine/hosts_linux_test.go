package engine_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// hostEngine starts an engine that is the host name on the harness's
// store, plugins and clock, with a store of its own to kill. The clock
// stands still, so a host goes down only when the test advances it past
// the heartbeat timeout.
func (h *harness) hostEngine(id, name string) (*engine.Engine, *crashStore) {
	h.t.Helper()
	cs := newCrashStore(h.store)
	cfg := engine.Config{EngineID: id, CheckInterval: 20 * time.Millisecond, Poll: 20 * time.Millisecond, Now: h.clock.Now,
		SecretsKey: testSecretsKey, IgnoreDriverEvents: true, HostName: name, HostLabels: map[string]string{"rack": "r-" + name},
		HeartbeatInterval: 10 * time.Millisecond, HostDownTimeout: 10 * time.Second}
	e := engine.New(cs, h.plugins, hclog.NewNullLogger(), cfg)
	if err := e.Start(context.Background()); err != nil {
		h.t.Fatalf("start the engine of host %s: %v", name, err)
	}
	h.t.Cleanup(e.Stop)
	return e, cs
}

// byHost counts a cluster's nodes per host.
func (h *harness) byHost(clusterID string) map[string]int {
	out := map[string]int{}
	for _, n := range h.nodes(clusterID) {
		out[n.Host]++
	}
	return out
}

// settledOn says whether a cluster is ACTIVE with want nodes per host, all
// ACTIVE, and no action running on it.
func (h *harness) settledOn(clusterID string, want map[string]int) (bool, string) {
	cl := h.getCluster(clusterID)
	got := h.byHost(clusterID)
	for _, n := range h.nodes(clusterID) {
		if n.Status != model.NodeActive {
			return false, fmt.Sprintf("node %s on host %q is %s (%s)", n.Name, n.Host, n.Status, n.StatusReason)
		}
	}
	if cl.Status != model.ClusterActive || fmt.Sprint(got) != fmt.Sprint(want) {
		return false, fmt.Sprintf("cluster %s (%s) has nodes per host %v, want %v", cl.Status, cl.StatusReason, got, want)
	}
	if busy, err := h.store.ActiveActions(h.ctx(), clusterID); err != nil || len(busy) > 0 {
		return false, fmt.Sprintf("the cluster still has %d actions running (%v)", len(busy), err)
	}
	return true, ""
}

// TestHostsTwoAgents runs two engines on one store, each its own host, and
// a local.process cluster over them: nodes spread by fewest nodes, each
// host's agent alone runs its nodes' actions, a host whose heartbeat stops
// goes down and its nodes are recreated on the other, a drained host's
// nodes move start-first, a paused host takes no new node, and a clean
// stop puts a host in maintenance.
func TestHostsTwoAgents(t *testing.T) {
	h := newIdleHarness(t, nil)
	seen := h.killAtEnd()
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	// Host b is known (an agent heartbeated it) but its agent is not
	// running yet: its nodes' actions wait for it.
	if err := h.store.ReportHost(h.ctx(), &model.Host{Name: "b", Kind: model.HostAgent, State: model.HostUp, Heartbeat: h.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	ha, err := h.store.GetHost(h.ctx(), "a")
	if err != nil {
		t.Fatal(err)
	}
	if ha.State != model.HostUp || ha.Labels["rack"] != "r-a" || ha.Driver != process.TypeName || ha.Load["load1"] < 0 || len(ha.Load) != 3 {
		t.Fatalf("host a after its agent started: %+v", ha)
	}

	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	desired := 4
	cl, create, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "procs", Profile: "proc", DesiredCapacity: &desired})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() (bool, string) {
		var ready []string
		for _, n := range h.nodes(cl.ID) {
			if n.Status == model.NodeActive {
				ready = append(ready, n.Host)
			}
		}
		slices.Sort(ready)
		return slices.Equal(ready, []string{"a", "a"}), fmt.Sprintf("active nodes on hosts %v, want a's two only", ready)
	})
	if got := h.byHost(cl.ID); got["a"] != 2 || got["b"] != 2 {
		t.Fatalf("nodes per host %v, want 2 and 2", got)
	}
	for _, n := range h.nodes(cl.ID) {
		if n.Host == "b" && n.Status != model.NodeInit {
			t.Errorf("node %s of host b is %s before b's agent runs", n.Name, n.Status)
		}
	}
	h.eng.Stop() // a stop is maintenance ...
	if hs, _ := h.store.GetHost(h.ctx(), "a"); hs.State != model.HostMaintenance {
		t.Errorf("host a after a clean stop is %s, want maintenance", hs.State)
	}
	a, _ = h.hostEngine("engine-a", "a") // ... and a start brings it back
	h.eng = a
	_, bStore := h.hostEngine("engine-b", "b")
	h.ok(create, nil)
	waitFor(t, 20*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"a": 2, "b": 2}) })
	seen(cl.ID)

	// Host b dies: its agent stops without a word to the store.
	bStore.kill()
	var lost []string
	for _, n := range h.nodes(cl.ID) {
		if n.Host == "b" {
			lost = append(lost, n.ID)
		}
	}
	h.clock.advance(11 * time.Second)
	waitFor(t, 20*time.Second, func() (bool, string) {
		hb, _ := h.store.GetHost(h.ctx(), "b")
		return hb.State == model.HostDown, fmt.Sprintf("host b is %s, want down", hb.State)
	})
	waitFor(t, 30*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"a": 4}) })
	seen(cl.ID)
	for _, n := range h.nodes(cl.ID) {
		if slices.Contains(lost, n.ID) {
			t.Errorf("node %s of the down host is still a member", n.Name)
		}
	}
	if got := h.getCluster(cl.ID).DesiredCapacity; got != 4 {
		t.Errorf("desired capacity %d after the move, want 4", got)
	}

	// b comes back; a is drained: its nodes move to b, start-first.
	h.hostEngine("engine-b2", "b")
	stop := make(chan struct{})
	low := make(chan string, 1)
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
			nodes, err := h.store.ClusterNodes(context.Background(), cl.ID)
			if err != nil {
				continue
			}
			active := 0
			for _, n := range nodes {
				if n.Status == model.NodeActive {
					active++
				}
			}
			if active < 4 {
				select {
				case low <- fmt.Sprintf("%d active nodes during the drain", active):
				default:
				}
			}
		}
	}()
	drain, active, pause := model.HostDrain, model.HostActive, model.HostPause
	if _, err := h.eng.UpdateHost(h.ctx(), "a", engine.HostUpdate{Availability: &drain}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"b": 4}) })
	close(stop)
	sampler.Wait()
	select {
	case msg := <-low:
		t.Errorf("the drain went below the desired capacity: %s", msg)
	default:
	}
	seen(cl.ID)

	// Undrained, a takes new nodes again (it has the fewest).
	if _, err := h.eng.UpdateHost(h.ctx(), "a", engine.HostUpdate{Availability: &active}); err != nil {
		t.Fatal(err)
	}
	h.ok(h.act(cl, `{"scale_out": {"count": 2}}`))
	waitFor(t, 20*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"a": 2, "b": 4}) })
	seen(cl.ID)

	// Paused, a keeps its nodes and takes no new one.
	if _, err := h.eng.UpdateHost(h.ctx(), "a", engine.HostUpdate{Availability: &pause}); err != nil {
		t.Fatal(err)
	}
	h.ok(h.act(cl, `{"scale_out": {"count": 1}}`))
	waitFor(t, 20*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"a": 2, "b": 5}) })
	seen(cl.ID)
}

// TestHostUpdateRules: an operator's update names the field and the rule
// it breaks.
func TestHostUpdateRules(t *testing.T) {
	h := newIdleHarness(t, nil)
	if err := h.store.ReportHost(h.ctx(), &model.Host{Name: "h1", Kind: model.HostAgent, State: model.HostUp, Heartbeat: epoch}); err != nil {
		t.Fatal(err)
	}
	bad, longKey := "sleep", map[string]string{"-x": "1"}
	for name, c := range map[string]struct {
		host string
		u    engine.HostUpdate
		want string
	}{
		"availability": {"h1", engine.HostUpdate{Availability: &bad}, `availability "sleep" is not valid: it must be one of active, pause, drain.`},
		"labels":       {"h1", engine.HostUpdate{Labels: &longKey}, `labels key "-x" is not valid`},
		"nothing":      {"h1", engine.HostUpdate{}, "Nothing to update"},
		"name":         {"no/such", engine.HostUpdate{Availability: &bad}, `availability "sleep"`},
		"bad name":     {"a b", engine.HostUpdate{Labels: &map[string]string{}}, `name "a b" is not a valid host name`},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := h.eng.UpdateHost(h.ctx(), c.host, c.u)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("UpdateHost = %v, want an error with %q", err, c.want)
			}
		})
	}
	labels := map[string]string{"disk": "ssd"}
	got, err := h.eng.UpdateHost(h.ctx(), "h1", engine.HostUpdate{Labels: &labels})
	if err != nil || got.OperatorLabels["disk"] != "ssd" || got.Availability != model.HostActive {
		t.Fatalf("UpdateHost = %+v, %v", got, err)
	}
}

// TestHostDownBeforeItsNodeIsCreated: a node placed on a host whose agent
// never comes does not hold its cluster's creation forever: once the host
// is down, another agent takes the node's creation and fails it without a
// driver call, and the node is then recreated on a live host.
func TestHostDownBeforeItsNodeIsCreated(t *testing.T) {
	h := newIdleHarness(t, nil)
	started := map[int]bool{}
	t.Cleanup(func() { killAll(t, slices.Collect(maps.Keys(started))) })
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	if err := h.store.ReportHost(h.ctx(), &model.Host{Name: "b", Kind: model.HostAgent, State: model.HostUp, Heartbeat: h.clock.Now()}); err != nil {
		t.Fatal(err)
	}
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	desired := 2
	cl, create, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "procs", Profile: "proc", DesiredCapacity: &desired})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, 20*time.Second, func() (bool, string) {
		got := h.byHost(cl.ID)
		return got["a"] == 1 && got["b"] == 1, fmt.Sprintf("nodes per host %v", got)
	})
	h.clock.advance(11 * time.Second)
	end := h.wait(create, nil)
	if end.Status != model.ActionFailed || !strings.Contains(end.StatusReason, "Host b of node") {
		t.Errorf("creation %s: %s; want it failed by the down host", end.Status, end.StatusReason)
	}
	waitFor(t, 30*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"a": 2}) })
	for _, n := range h.nodes(cl.ID) {
		if pid, ok := n.Data["pid"].(float64); ok {
			started[int(pid)] = true
		}
	}
}

// TestPlacementPolicyOnAgentHosts: grove.policy.placement over
// local.process reads the agent hosts of the store: their labels (the
// agent's and the operator's) and their availability decide where new
// nodes go, and each node runs on the host the policy chose.
func TestPlacementPolicyOnAgentHosts(t *testing.T) {
	h := newIdleHarness(t, nil)
	started := map[int]bool{}
	t.Cleanup(func() { killAll(t, slices.Collect(maps.Keys(started))) })
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	h.hostEngine("engine-b", "b")
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	zero := 0
	cl := h.create(engine.ClusterCreate{Name: "procs", Profile: "proc", DesiredCapacity: &zero})
	h.policy("on-b", "grove.policy.placement", "1.0", `{"constraints": "labels.rack == \"r-b\""}`)
	h.attach(cl, "on-b")
	h.ok(h.act(cl, `{"scale_out": {"count": 3}}`))
	waitFor(t, 20*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"b": 3}) })

	// An operator label moves the constraint's answer to host a.
	labels := map[string]string{"rack": "r-b"}
	if _, err := h.eng.UpdateHost(h.ctx(), "a", engine.HostUpdate{Labels: &labels}); err != nil {
		t.Fatal(err)
	}
	drain := model.HostDrain
	if _, err := h.eng.UpdateHost(h.ctx(), "b", engine.HostUpdate{Availability: &drain}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"a": 3}) })
	h.ok(h.act(cl, `{"scale_out": {"count": 1}}`))
	waitFor(t, 20*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"a": 4}) })
	for _, n := range h.nodes(cl.ID) {
		if pid, ok := n.Data["pid"].(float64); ok {
			started[int(pid)] = true
		}
	}
	// The explanation shows both agent hosts: a ranked with its four
	// nodes, b discarded with its reason.
	d, err := h.eng.ClusterPlacement(h.ctx(), cl)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, r := range d.Hosts {
		rows[r.Host] = fmt.Sprintf("rank %d nodes %d %s", r.Rank, r.Nodes, r.Reason)
	}
	if len(rows) != 2 || rows["a"] != "rank 1 nodes 4 " || !strings.HasPrefix(rows["b"], "rank 0 nodes 0 ") || rows["b"] == "rank 0 nodes 0 " {
		t.Errorf("placement of the cluster: %v; want a ranked first with 4 nodes and b discarded with a reason", rows)
	}
}

// TestPlacementPolicyPlacesMoves: the replacements of a drained host's
// nodes are placed by the cluster's grove.policy.placement, not by the
// fewest-nodes rule: here its constraint keeps them off the emptiest host.
func TestPlacementPolicyPlacesMoves(t *testing.T) {
	h := newIdleHarness(t, nil)
	started := map[int]bool{}
	t.Cleanup(func() { killAll(t, slices.Collect(maps.Keys(started))) })
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	h.hostEngine("engine-b", "b")
	h.hostEngine("engine-c", "c")
	for _, name := range []string{"b", "c"} {
		labels := map[string]string{"disk": "ssd"}
		if _, err := h.eng.UpdateHost(h.ctx(), name, engine.HostUpdate{Labels: &labels}); err != nil {
			t.Fatal(err)
		}
	}
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	zero := 0
	cl := h.create(engine.ClusterCreate{Name: "procs", Profile: "proc", DesiredCapacity: &zero})
	h.policy("ssd", "grove.policy.placement", "1.0", `{"placement": "spread", "constraints": "labels.disk == \"ssd\""}`)
	h.attach(cl, "ssd")
	h.ok(h.act(cl, `{"scale_out": {"count": 2}}`))
	waitFor(t, 20*time.Second, func() (bool, string) {
		got := h.byHost(cl.ID)
		ok, why := h.settledOn(cl.ID, got)
		return ok && got["a"] == 0 && got["b"]+got["c"] == 2, fmt.Sprintf("%v %s", got, why)
	})
	for _, n := range h.nodes(cl.ID) {
		if n.Data["host"] != n.Host {
			t.Errorf("node %s on %s has host %v in its data", n.Name, n.Host, n.Data["host"])
		}
	}
	drain := model.HostDrain
	if _, err := h.eng.UpdateHost(h.ctx(), "b", engine.HostUpdate{Availability: &drain}); err != nil {
		t.Fatal(err)
	}
	waitFor(t, 30*time.Second, func() (bool, string) { return h.settledOn(cl.ID, map[string]int{"c": 2}) })
	for _, n := range h.nodes(cl.ID) {
		if pid, ok := n.Data["pid"].(float64); ok {
			started[int(pid)] = true
		}
	}
}
