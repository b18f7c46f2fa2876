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
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// expectEvents are the statuses of the expectation events a cluster
// recorded, oldest first.
func (h *harness) expectEvents(clusterID string) []string {
	h.t.Helper()
	evs, err := h.store.ListEvents(h.ctx(), store.ListOpts{})
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, ev := range evs {
		if ev.ClusterID == clusterID && strings.HasPrefix(ev.Status, "EXPECT") {
			out = append(out, ev.Status+" "+ev.Action)
		}
	}
	return out
}

// TestFailoverExpectations: over three agent hosts, a failover cluster
// with orchestrate no starts nothing on its own; start brings it up on
// the leader at once; switch moves it to a named host (refused, naming
// the host and why, for one that cannot take it); giveback brings it back
// to the leader; stop stops it and freezes the instances, so nothing
// restarts it; start thaws them and brings it up again. Each expectation
// is cleared once reached, with an event.
func TestFailoverExpectations(t *testing.T) {
	h := newIdleHarness(t, nil)
	seen := h.killAtEnd()
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	h.hostEngine("engine-b", "b")
	h.hostEngine("engine-c", "c")
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "600"}, "stop_timeout": 0})
	cl := h.create(engine.ClusterCreate{Name: "pg", Profile: "proc", Config: failoverConfig("no")})
	waitFor(t, 20*time.Second, func() (bool, string) {
		rows := h.instanceRows(cl.ID)
		return len(rows) == 3, fmt.Sprintf("%d instance rows, want 3", len(rows))
	})
	// The clock stands still: a start that came from orchestration would
	// need the ready period, so whatever starts is the expectation's.
	for range 5 {
		if err := a.CheckHealth(h.ctx()); err != nil {
			t.Fatal(err)
		}
	}
	if n := h.nodes(cl.ID); len(n) != 0 {
		t.Fatalf("%d nodes with orchestrate no; want none", len(n))
	}

	settled := func(want string) {
		t.Helper()
		waitFor(t, 30*time.Second, func() (bool, string) {
			seen(cl.ID)
			x, err := h.store.GetExpectation(h.ctx(), cl.ID)
			if err != nil {
				t.Fatal(err)
			}
			up := h.activeOn(cl.ID, "a", "b", "c")
			return fmt.Sprint(up) == want && x != nil && x.Kind == "" && len(h.nodes(cl.ID)) == len(up),
				fmt.Sprintf("active on %v, %d nodes, expectation %+v, states %v", up, len(h.nodes(cl.ID)), x, rowStates(h.instanceRows(cl.ID)))
		})
	}

	// start, with orchestrate no: the leader starts at once.
	if st := h.command(cl, `{"start": {}}`); st.Status != model.ActionSucceeded || st.Action != model.ClusterExpectStartAction {
		t.Fatalf("start: %s %s %s", st.Action, st.Status, st.StatusReason)
	}
	settled("[a]")

	// switch to a host that is not a candidate: refused, naming it.
	if _, err := h.act(cl, `{"switch": {"host": "z"}}`); err == nil || !strings.Contains(err.Error(), `"z"`) {
		t.Errorf("switch to z: %v, want a refusal naming z", err)
	}
	h.command(cl, `{"freeze": {"host": "b"}}`)
	if _, err := h.act(cl, `{"switch": {"host": "b"}}`); err == nil || !strings.Contains(err.Error(), `"b"`) || !strings.Contains(err.Error(), "frozen") {
		t.Errorf("switch to frozen b: %v, want a refusal naming b and frozen", err)
	}
	if _, err := h.act(cl, `{"switch": {}}`); err == nil || !strings.Contains(err.Error(), "switch.host") {
		t.Errorf("switch without a host: %v", err)
	}

	// switch to c: a stops, then c starts.
	if sw := h.command(cl, `{"switch": {"host": "c"}}`); sw.Status != model.ActionSucceeded || sw.Action != model.ClusterSwitchAction {
		t.Fatalf("switch: %s %s %s", sw.Action, sw.Status, sw.StatusReason)
	}
	settled("[c]")

	// giveback: back to a, the placement's leader.
	h.command(cl, `{"giveback": {}}`)
	settled("[a]")

	// stop: nothing runs and every instance is frozen; more rounds
	// restart nothing.
	if sp := h.command(cl, `{"stop": {}}`); sp.Status != model.ActionSucceeded || sp.Action != model.ClusterExpectStopAction {
		t.Fatalf("stop: %s %s %s", sp.Action, sp.Status, sp.StatusReason)
	}
	settled("[]")
	for host, r := range h.instanceRows(cl.ID) {
		if !r.Frozen {
			t.Errorf("the instance on %s is not frozen after stop", host)
		}
	}
	h.clock.advance(2 * time.Second)
	for range 5 {
		if err := a.CheckHealth(h.ctx()); err != nil {
			t.Fatal(err)
		}
	}
	if up := h.activeOn(cl.ID, "a", "b", "c"); len(up) != 0 {
		t.Errorf("active on %v after stop and more rounds", up)
	}

	// start thaws first and brings it up on the leader.
	h.command(cl, `{"start": {}}`)
	settled("[a]")
	for host, r := range h.instanceRows(cl.ID) {
		if r.Frozen {
			t.Errorf("the instance on %s is still frozen after start", host)
		}
	}
	want := []string{"EXPECTING CLUSTER_EXPECT_START", "EXPECT_REACHED CLUSTER_EXPECT_START", "EXPECTING CLUSTER_SWITCH", "EXPECT_REACHED CLUSTER_SWITCH",
		"EXPECTING CLUSTER_GIVEBACK", "EXPECT_REACHED CLUSTER_GIVEBACK", "EXPECTING CLUSTER_EXPECT_STOP", "EXPECT_REACHED CLUSTER_EXPECT_STOP",
		"EXPECTING CLUSTER_EXPECT_START", "EXPECT_REACHED CLUSTER_EXPECT_START"}
	// The test's clock stands still, so the events' order is not theirs:
	// compare them sorted.
	got := h.expectEvents(cl.ID)
	slices.Sort(got)
	slices.Sort(want)
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("expectation events\n %v\nwant\n %v", got, want)
	}
	// The expectation is reached once a's node is up; a's monitor then
	// goes through started back to idle.
	waitFor(t, 20*time.Second, func() (bool, string) {
		x := h.instanceRows(cl.ID)["a"]
		return x.State == monitor.Idle, fmt.Sprintf("a's instance %q; want idle", x.State)
	})
}

// TestFailoverExpectFailed: a start whose every candidate fails leaves
// the instance in start failed and drops the expectation with an
// EXPECT_FAILED event naming why; the cluster GET's expectation then
// says it failed.
func TestFailoverExpectFailed(t *testing.T) {
	h := newIdleHarness(t, nil)
	a, _ := h.hostEngine("engine-a", "a")
	h.eng = a
	h.profileOf("broken", process.TypeName, map[string]any{"command": []any{"/nonexistent/grove-expect-test"}, "stop_timeout": 0})
	cl := h.create(engine.ClusterCreate{Name: "broken", Profile: "broken", Config: failoverConfig("no")})
	waitFor(t, 20*time.Second, func() (bool, string) {
		r := h.instanceRows(cl.ID)["a"]
		return r != nil, "no instance row for a yet"
	})
	h.command(cl, `{"start": {}}`)
	waitFor(t, 30*time.Second, func() (bool, string) {
		x, err := a.ClusterExpectation(h.ctx(), h.getCluster(cl.ID))
		if err != nil {
			t.Fatal(err)
		}
		return x != nil && x.Kind == "" && strings.HasPrefix(x.Reason, "failed: "),
			fmt.Sprintf("expectation %+v, states %v", x, rowStates(h.instanceRows(cl.ID)))
	})
	if r := h.instanceRows(cl.ID)["a"]; r.State != monitor.StartFailed {
		t.Errorf("a's instance %q; want start failed", r.State)
	}
	evs, err := h.store.ListEvents(h.ctx(), store.ListOpts{})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, ev := range evs {
		if ev.ClusterID == cl.ID && ev.Status == "EXPECT_FAILED" {
			found = ev.Level == model.LevelWarning && strings.Contains(ev.StatusReason, "no host left can start it")
			if !found {
				t.Errorf("EXPECT_FAILED event: level %d, %q", ev.Level, ev.StatusReason)
			}
		}
	}
	if !found {
		t.Error("no EXPECT_FAILED event")
	}
}
