package engine_test

import (
	"time"

	"context"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/monitor"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// failoverCluster creates an empty cluster with the given grove.failover
// topology and reports agent hosts a and b.
func (h *harness) failoverCluster(name, topology string) *model.Cluster {
	h.t.Helper()
	// local.process: its hosts are the agent hosts below, and no monitor
	// runs them (the harness's engine is no host), so only the commands
	// write the instances.
	h.profileOf("p-"+name, process.TypeName, map[string]any{"command": []any{"sleep", "600"}})
	zero := 0
	cl := h.create(engine.ClusterCreate{Name: name, Profile: "p-" + name, DesiredCapacity: &zero,
		Config: map[string]any{"grove.failover": map[string]any{"topology": topology}}})
	for _, n := range []string{"a", "b"} {
		if err := h.store.ReportHost(h.ctx(), &model.Host{Name: n, Kind: model.HostAgent, State: model.HostUp, Heartbeat: h.clock.Now()}); err != nil {
			h.t.Fatal(err)
		}
	}
	return cl
}

// instanceRows are a cluster's instance rows by host.
func (h *harness) instanceRows(clusterID string) map[string]*model.Instance {
	rows, err := h.store.ListInstances(h.ctx(), clusterID)
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]*model.Instance{}
	for _, r := range rows {
		out[r.Host] = r
	}
	return out
}

// agentHosts are the agent hosts in the store (the harness's own engine
// may be one).
func (h *harness) agentHosts() []string {
	h.t.Helper()
	hs, err := h.store.ListHosts(h.ctx())
	if err != nil {
		h.t.Fatal(err)
	}
	var out []string
	for _, x := range hs {
		if x.Kind == model.HostAgent {
			out = append(out, x.Name)
		}
	}
	return out
}

// instanceEvents are the events an action recorded per host.
func (h *harness) instanceEvents(a *model.Action) map[string]*model.Event {
	h.t.Helper()
	evs, err := h.store.ListEvents(h.ctx(), store.ListOpts{})
	if err != nil {
		h.t.Fatal(err)
	}
	out := map[string]*model.Event{}
	for _, ev := range evs {
		if ev.MetaData["action"] == a.ID && ev.MetaData["host"] != nil {
			out[ev.MetaData["host"].(string)] = ev
		}
	}
	return out
}

func (h *harness) command(cl *model.Cluster, body string) *model.Action {
	h.t.Helper()
	return h.wait(h.act(cl, body))
}

func TestInstanceCommands(t *testing.T) {
	h := newHarness(t, nil)
	cl := h.failoverCluster("ha", "failover")

	// freeze with no host: every agent host gets a frozen idle instance.
	a := h.command(cl, `{"freeze": {}}`)
	if a.Status != model.ActionSucceeded || a.Action != model.ClusterFreezeAction {
		t.Fatalf("freeze: %s %s %s", a.Action, a.Status, a.StatusReason)
	}
	xs := h.instanceRows(cl.ID)
	agents := h.agentHosts()
	if len(xs) != len(agents) || len(agents) < 2 {
		t.Fatalf("instances %v after freeze, agent hosts %v", xs, agents)
	}
	evs := h.instanceEvents(a)
	for _, n := range agents {
		x := xs[n]
		if x == nil || !x.Frozen || x.State != monitor.Idle {
			t.Fatalf("instance on %s after freeze: %+v", n, x)
		}
		if evs[n] == nil || evs[n].Status != "FROZEN" {
			t.Fatalf("event for %s: %+v", n, evs[n])
		}
	}

	// thaw one host: only its flag goes.
	a = h.command(cl, `{"thaw": {"host": "a"}}`)
	if a.Status != model.ActionSucceeded {
		t.Fatalf("thaw: %s %s", a.Status, a.StatusReason)
	}
	xs = h.instanceRows(cl.ID)
	if xs["a"].Frozen || !xs["b"].Frozen {
		t.Fatalf("after thaw a: a frozen %v, b frozen %v", xs["a"].Frozen, xs["b"].Frozen)
	}
	if ev := h.instanceEvents(a); len(ev) != 1 || ev["a"] == nil || ev["a"].Status != "THAWED" {
		t.Fatalf("thaw events: %v", ev)
	}

	// freeze one host that is already frozen: nothing changes, and the
	// event says so.
	before := h.instanceRows(cl.ID)["b"].Version
	a = h.command(cl, `{"freeze": {"host": "b"}}`)
	if a.Status != model.ActionSucceeded || h.instanceRows(cl.ID)["b"].Version != before {
		t.Fatalf("freeze of a frozen host: %s %s, version %d was %d", a.Status, a.StatusReason, h.instanceRows(cl.ID)["b"].Version, before)
	}
	if ev := h.instanceEvents(a)["b"]; ev == nil || ev.Status != "UNCHANGED" || !strings.Contains(ev.StatusReason, "already frozen") {
		t.Fatalf("event of the repeated freeze: %+v", ev)
	}

	// freeze one host: a then is frozen again.
	h.ok(h.act(cl, `{"freeze": {"host": "a"}}`))
	if !h.instanceRows(cl.ID)["a"].Frozen {
		t.Fatal("a is not frozen after freeze a")
	}

	// clear: restarts go to zero and a failed state back to idle.
	x := h.instanceRows(cl.ID)["a"]
	x.State, x.Restarts, x.Outcome = monitor.StartFailed, 3, monitor.Failed
	if err := h.store.PutInstance(h.ctx(), x); err != nil {
		t.Fatal(err)
	}
	a = h.command(cl, `{"clear": {"host": "a"}}`)
	x = h.instanceRows(cl.ID)["a"]
	if a.Status != model.ActionSucceeded || x.State != monitor.Idle || x.Restarts != 0 || x.Outcome != "" || x.Reason != "cleared" {
		t.Fatalf("clear: %s %s, instance %+v", a.Status, a.StatusReason, x)
	}
	if !x.Frozen {
		t.Fatal("clear thawed the instance; it only resets the monitor")
	}

	// clear refused while an action runs: the action fails with the
	// monitor's sentence, and the instance is left alone.
	x.State, x.Restarts = monitor.Starting, 2
	if err := h.store.PutInstance(h.ctx(), x); err != nil {
		t.Fatal(err)
	}
	a = h.command(cl, `{"clear": {}}`)
	if a.Status != model.ActionFailed || !strings.Contains(a.StatusReason, "Clear is refused while the instance on a is starting: wait for the action to end.") {
		t.Fatalf("clear in starting: %s %q", a.Status, a.StatusReason)
	}
	if x := h.instanceRows(cl.ID)["a"]; x.State != monitor.Starting || x.Restarts != 2 {
		t.Fatalf("refused clear changed the instance: %+v", x)
	}
	if ev := h.instanceEvents(a)["a"]; ev == nil || ev.Status != "REFUSED" || ev.Level != model.LevelWarning {
		t.Fatalf("event of the refused clear: %+v", ev)
	}
}

func TestInstanceCommandRefusals(t *testing.T) {
	h := newHarness(t, nil)
	ha := h.failoverCluster("ha", "flex")
	rep := h.failoverCluster("rep", "replicated")
	for _, c := range []struct {
		cl   *model.Cluster
		body string
		want string
	}{
		{rep, `{"freeze": {}}`, "freeze is only for a cluster whose grove.failover topology is failover or flex; the cluster 'rep' has topology replicated."},
		{ha, `{"thaw": {"host": "nowhere"}}`, "thaw.host: 'nowhere' is neither an agent host nor a host with an instance of the cluster 'ha'."},
		{ha, `{"clear": {"host": "a"}}`, "clear.host: the cluster 'ha' has no instance on host 'a'."},
		{ha, `{"freeze": {"host": 3}}`, "freeze.host must be a host name."},
		{ha, `{"freeze": {"hosts": "a"}}`, "freeze.hosts is not a parameter of freeze; use host."},
	} {
		_, err := h.act(c.cl, c.body)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: got %v, want %q", c.body, err, c.want)
			continue
		}
		if st, _ := engine.HTTPStatus(err); st != 400 {
			t.Errorf("%s: status %d, want 400", c.body, st)
		}
	}
}

// raceStore makes another writer change an instance just before each of
// the first writes of a command, so each of them loses on its version.
type raceStore struct {
	store.Store
	races atomic.Int32
}

func (s *raceStore) PutInstance(ctx context.Context, x *model.Instance) error {
	if x.Version > 0 && s.races.Add(-1) >= 0 {
		xs, err := s.Store.ListInstances(ctx, x.ClusterID)
		if err != nil {
			return err
		}
		for _, o := range xs {
			if o.Host == x.Host {
				o.Reason = "the monitor round wrote first"
				if err := s.Store.PutInstance(ctx, o); err != nil {
					return err
				}
			}
		}
	}
	return s.Store.PutInstance(ctx, x)
}

func TestInstanceCommandRetriesConflicts(t *testing.T) {
	var rs *raceStore
	h := newHarness(t, func(s store.Store) store.Store {
		rs = &raceStore{Store: s}
		return rs
	})
	cl := h.failoverCluster("ha", "failover")
	h.ok(h.act(cl, `{"freeze": {"host": "a"}}`))

	// Two lost writes: the third read-apply-write wins.
	rs.races.Store(2)
	a := h.command(cl, `{"thaw": {"host": "a"}}`)
	if x := h.instanceRows(cl.ID)["a"]; a.Status != model.ActionSucceeded || x.Frozen {
		t.Fatalf("thaw after two conflicts: %s %s, instance %+v", a.Status, a.StatusReason, x)
	}
	if n := rs.races.Load(); n >= 0 {
		t.Fatalf("the store raced %d times fewer than set", n+1)
	}

	// A writer that always comes first: the command gives up with the
	// conflict after its bounded tries.
	h.ok(h.act(cl, `{"freeze": {"host": "a"}}`))
	rs.races.Store(100)
	a = h.command(cl, `{"thaw": {"host": "a"}}`)
	if a.Status != model.ActionFailed || !strings.Contains(a.StatusReason, "changed by another writer") {
		t.Fatalf("thaw against a writer that always wins: %s %q", a.Status, a.StatusReason)
	}
	if left := rs.races.Load(); left != 100-5 {
		t.Fatalf("the command tried %d times, want 5", 100-left)
	}
}

// TestInstanceCommandsWhileBusy: a monitor command is accepted and runs
// while another action of the cluster is running (here one held by
// another agent's lease), since it takes no cluster lock.
func TestInstanceCommandsWhileBusy(t *testing.T) {
	h := newHarness(t, nil)
	cl := h.failoverCluster("ha", "failover")
	now := h.clock.Now()
	busy := &model.Action{ID: "busy-sync", Name: "busy-sync", Action: model.ClusterGlobalSyncAction, Target: cl.ID, Status: model.ActionRunning,
		Owner: "another-agent", LeaseExpires: now.Add(time.Hour), Inputs: map[string]any{}, Outputs: map[string]any{}, Data: map[string]any{},
		User: cl.User, Project: cl.Project, CreatedAt: now}
	if err := h.store.CreateActions(h.ctx(), []*model.Action{busy}); err != nil {
		t.Fatal(err)
	}
	if _, err := h.act(cl, `{"scale_out": {}}`); err == nil {
		t.Fatal("a scale_out beside a running action was accepted; the test needs the cluster busy")
	}
	a := h.command(cl, `{"freeze": {}}`)
	if a.Status != model.ActionSucceeded {
		t.Fatalf("freeze beside a running action: %s %s", a.Status, a.StatusReason)
	}
	for host, x := range h.instanceRows(cl.ID) {
		if !x.Frozen {
			t.Errorf("instance on %s not frozen", host)
		}
	}
}

// TestFreezeCancelsExpectation: a freeze of every instance cancels a
// pending expectation, with an event naming the action that set it; a
// freeze of one host leaves it pending. No monitor runs in the harness,
// so the expectation stays pending until a command clears it.
func TestFreezeCancelsExpectation(t *testing.T) {
	h := newHarness(t, nil)
	cl := h.failoverCluster("ha", "failover")
	start := h.command(cl, `{"start": {}}`)
	if start.Status != model.ActionSucceeded {
		t.Fatalf("start: %s %s", start.Status, start.StatusReason)
	}
	pending := func() *model.Expectation {
		t.Helper()
		x, err := h.store.GetExpectation(h.ctx(), cl.ID)
		if err != nil || x == nil {
			t.Fatalf("expectation: %+v, %v", x, err)
		}
		return x
	}
	if x := pending(); x.Kind != monitor.ExpectStart {
		t.Fatalf("after start the expectation is %+v, want start pending", x)
	}

	one := h.command(cl, `{"freeze": {"host": "a"}}`)
	if x := pending(); one.Status != model.ActionSucceeded || x.Kind != monitor.ExpectStart {
		t.Fatalf("after freezing one host: %s %q, expectation %+v; want start still pending", one.Status, one.StatusReason, x)
	}

	all := h.command(cl, `{"freeze": {}}`)
	x := pending()
	if all.Status != model.ActionSucceeded || x.Kind != "" || !strings.Contains(x.Reason, "cancelled") || !strings.Contains(x.Reason, all.ID) {
		t.Fatalf("after freezing the cluster: %s %q, expectation %+v; want it cleared as cancelled by %s", all.Status, all.StatusReason, x, all.ID)
	}
	if !strings.Contains(all.StatusReason, "The pending start of the cluster is cancelled.") {
		t.Errorf("the freeze's reason %q does not say it cancelled the start", all.StatusReason)
	}
	evs, err := h.store.ListEvents(h.ctx(), store.ListOpts{})
	if err != nil {
		t.Fatal(err)
	}
	var cancelled []*model.Event
	for _, ev := range evs {
		if ev.Status == "EXPECT_CANCELLED" {
			cancelled = append(cancelled, ev)
		}
	}
	if len(cancelled) != 1 || cancelled[0].MetaData["action"] != start.ID || cancelled[0].Action != model.ClusterExpectStartAction ||
		cancelled[0].Level != model.LevelWarning {
		t.Fatalf("EXPECT_CANCELLED events: %+v; want one, for the start %s", cancelled, start.ID)
	}

	// Nothing pending: a second freeze cancels nothing.
	again := h.command(cl, `{"freeze": {}}`)
	if again.Status != model.ActionSucceeded || strings.Contains(again.StatusReason, "cancelled") {
		t.Fatalf("a second freeze: %s %q", again.Status, again.StatusReason)
	}
}
