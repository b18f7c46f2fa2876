package engine_test

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/deps"
	"github.com/grovehq/grove/core/store"
)

// depend declares a dependency group of cl, as the API stores one.
func (h *harness) depend(cl *model.Cluster, group, grouping, restartOn string, members ...string) {
	h.t.Helper()
	existing, err := h.store.ListDependencies(h.ctx())
	if err != nil {
		h.t.Fatal(err)
	}
	var mine []model.DependencyGroup
	for _, g := range existing {
		if g.DeclaredBy == cl.ID {
			mine = append(mine, g)
		}
	}
	mine = append(mine, model.DependencyGroup{ClusterID: cl.ID, Name: group, Grouping: grouping, RestartOn: restartOn, Members: members,
		DeclaredBy: cl.ID, CreatedAt: h.clock.Now()})
	if err := h.store.ReplaceDeclaredDependencies(h.ctx(), cl.ID, mine); err != nil {
		h.t.Fatal(err)
	}
}

// runState returns a cluster's run state and its reason.
func (h *harness) runState(id string) (string, string) {
	h.t.Helper()
	return model.RunState(h.getCluster(id))
}

// until waits for cond, running a health round between looks when health
// is set, and fails the test after 20 s.
func (h *harness) until(what string, health bool, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("not within 20s: %s", what)
		}
		if health {
			if err := h.eng.CheckHealth(h.ctx()); err != nil {
				h.t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (h *harness) inState(cl *model.Cluster, want string) func() bool {
	return func() bool {
		st, _ := h.runState(cl.ID)
		return st == want
	}
}

// TestDependencyOperatorStopAndStart: an operator's stop of db takes down
// web (require_all, restart_on restart) first; web started by the operator
// while db is stopped waits, offline with the reason naming db; db started
// brings web up.
func TestDependencyOperatorStopAndStart(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	db := h.cluster("db", 1, 60)
	web := h.cluster("web", 1, 60)
	h.depend(web, "database", "require_all", "restart", db.ID)

	h.ok(h.act(db, `{"stop": {}}`))
	if st, reason := h.runState(web.ID); st != model.RunOffline || !strings.Contains(reason, "db") {
		t.Fatalf("after the operator stopped db, web is %s (%q), want offline because of db", st, reason)
	}
	if r := model.RunDataOf(h.getCluster(web.ID)); r.Cause != model.StopByDependency {
		t.Errorf("web stopped with cause %q, want dependency", r.Cause)
	}

	h.ok(h.act(web, `{"start": {}}`))
	st, reason := h.runState(web.ID)
	if st != model.RunOffline || !strings.Contains(reason, "db") {
		t.Errorf("web started while db is stopped is %s (%q), want offline waiting on db", st, reason)
	}
	if n := h.nodes(web.ID)[0]; n.Status == model.NodeActive {
		t.Errorf("web's node runs while web waits on db")
	}

	h.ok(h.act(db, `{"start": {}}`))
	h.until("web runs once db runs", false, h.inState(web, model.RunRunning))
}

// TestDependencyErrorBypassesOperatorStop: a dependent with restart_on
// error is not in an operator's stop subtree (§C.5) and stays up; nor does
// a refresh reach it, while a restart_on refresh dependent restarts.
func TestDependencyRefreshAndBypass(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	db := h.cluster("db", 1, 60)
	web := h.cluster("web", 1, 60)
	cache := h.cluster("cache", 1, 60)
	h.depend(web, "database", "require_all", "error", db.ID)
	h.depend(cache, "database", "require_all", "refresh", db.ID)
	webNode, cacheNode := h.nodes(web.ID)[0].ID, h.nodes(cache.ID)[0].ID

	h.ok(h.act(db, `{"refresh": {}}`))
	ops := h.gate.calls("operate")
	if ops[webNode] != 0 {
		t.Errorf("db's refresh operated on web (restart_on error) %d times, want none", ops[webNode])
	}
	if ops[cacheNode] != 2 {
		t.Errorf("db's refresh operated on cache (restart_on refresh) %d times, want 2 (stop, start)", ops[cacheNode])
	}
	for _, cl := range []*model.Cluster{web, cache} {
		if st, _ := h.runState(cl.ID); st != model.RunRunning {
			t.Errorf("%s is %s after db's refresh, want running", cl.Name, st)
		}
	}

	h.ok(h.act(db, `{"stop": {}}`))
	if st, _ := h.runState(web.ID); st != model.RunRunning {
		t.Errorf("web (restart_on error) is %s after the operator stopped db, want running (bypassed)", st)
	}
	if st, _ := h.runState(cache.ID); st != model.RunOffline {
		t.Errorf("cache (restart_on refresh) is %s after the operator stopped db, want offline", st)
	}
}

// TestDependencyExcludeStops: an excluded cluster coming up stops its
// running dependent; once it stops again the dependent starts.
func TestDependencyExcludeStops(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	legacy := h.cluster("legacy", 1, 60)
	h.ok(h.act(legacy, `{"stop": {}}`))
	web := h.cluster("web", 1, 60)
	h.depend(web, "no-legacy", "exclude_all", "restart", legacy.ID)

	h.ok(h.act(legacy, `{"start": {}}`))
	h.until("web stops when legacy comes up", false, h.inState(web, model.RunOffline))
	h.ok(h.act(legacy, `{"stop": {}}`))
	h.until("web starts when legacy stops", false, h.inState(web, model.RunRunning))
}

// TestDependencyPathWaits: a cluster depending on a path waits, offline,
// until the path exists; the health round then starts it.
func TestDependencyPathWaits(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	web := h.cluster("web", 1, 60)
	flag := t.TempDir() + "/ready"
	h.depend(web, "flag", "require_all", "none", "path:"+flag)
	h.ok(h.act(web, `{"stop": {}}`))
	h.ok(h.act(web, `{"start": {}}`))
	if st, reason := h.runState(web.ID); st != model.RunOffline || !strings.Contains(reason, flag) {
		t.Fatalf("web is %s (%q) without its file, want offline naming %s", st, reason, flag)
	}
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	if st, _ := h.runState(web.ID); st != model.RunOffline {
		t.Fatalf("web is %s without its file after a health round, want offline", st)
	}
	if err := writeFile(flag); err != nil {
		t.Fatal(err)
	}
	h.until("web starts once its file exists", true, h.inState(web, model.RunRunning))
}

// TestDependencyCycleMaintenance: a cycle stored anyway (two declarations
// applied separately) puts its clusters in maintenance.
func TestDependencyCycleMaintenance(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	a := h.cluster("a", 1, 60)
	b := h.cluster("b", 1, 60)
	h.depend(a, "needs-b", "require_all", "error", b.ID)
	h.depend(b, "needs-a", "require_all", "error", a.ID)
	h.until("a and b go to maintenance", true, func() bool {
		sa, ra := h.runState(a.ID)
		sb, _ := h.runState(b.ID)
		return sa == model.RunMaintenance && sb == model.RunMaintenance && strings.Contains(ra, "dependency cycle")
	})
}

// TestDependencyMilestone: `none` stops a three-cluster stack leaves first;
// entering the milestone brings it up, dependencies first.
func TestDependencyMilestone(t *testing.T) {
	h, db, app, web := newChain(t, "error")
	if err := h.store.CreateMilestone(h.ctx(), &model.Milestone{ID: "m-1", Name: "stack", Clusters: []string{web.ID}, User: caller.User,
		Project: caller.Project, CreatedAt: h.clock.Now()}); err != nil {
		t.Fatal(err)
	}

	_, d, err := h.eng.EnterMilestone(h.ctx(), caller, "none")
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, st := range d.Steps {
		order = append(order, string(st.Op)+" "+st.Cluster)
	}
	if got := strings.Join(order, ", "); got != "stop web, stop app, stop db" {
		t.Errorf("milestone none: %s, want web, app, db stopped leaves first", got)
	}
	for _, cl := range []*model.Cluster{db, app, web} {
		h.until(cl.Name+" stops", false, h.inState(cl, model.RunOffline))
	}

	_, d, err = h.eng.EnterMilestone(h.ctx(), caller, "stack")
	if err != nil {
		t.Fatal(err)
	}
	order = nil
	for _, st := range d.Steps {
		order = append(order, string(st.Op)+" "+st.Cluster)
	}
	if got := strings.Join(order, ", "); got != "start db, start app, start web" {
		t.Errorf("milestone stack: %s, want db, app, web started dependencies first", got)
	}
	for _, cl := range []*model.Cluster{db, app, web} {
		h.until(cl.Name+" runs", false, h.inState(cl, model.RunRunning))
	}
	evs, err := h.store.ListEvents(h.ctx(), store.ListOpts{Project: caller.Project})
	if err != nil {
		t.Fatal(err)
	}
	entered := 0
	for _, ev := range evs {
		if ev.Action == "MILESTONE_ENTER" && ev.OType == "MILESTONE" && ev.Status == "entered" {
			entered++
		}
	}
	if entered != 2 {
		t.Errorf("%d MILESTONE_ENTER events, want one per milestone entered (2)", entered)
	}
}

func writeFile(path string) error { return os.WriteFile(path, []byte("ready\n"), 0o600) }

// TestDependencyUpdateRestartsDependents: a rolling update of db, and an
// operator's restart of it, are non-error stops: web (restart_on restart)
// stops first and starts again once db runs; api (restart_on error) is
// left alone.
func TestDependencyUpdateRestartsDependents(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	h.profile("p2")
	one, timeout := 1, 60
	db := h.create(engine.ClusterCreate{Name: "db", Profile: "p", DesiredCapacity: &one, Timeout: &timeout,
		Config: map[string]any{"grove.update": map[string]any{"monitor": "0s"}}})
	web := h.cluster("web", 1, 60)
	api := h.cluster("api", 1, 60)
	h.depend(web, "database", "require_all", "restart", db.ID)
	h.depend(api, "database", "require_all", "error", db.ID)
	webNode, apiNode := h.nodes(web.ID)[0].ID, h.nodes(api.ID)[0].ID

	p2 := "p2"
	_, a, err := h.eng.UpdateCluster(h.ctx(), caller, db.ID, engine.ClusterUpdate{Profile: &p2})
	h.ok(a, err)
	h.until("web stopped and started again", false, func() bool {
		st, _ := h.runState(web.ID)
		return st == model.RunRunning && h.gate.calls("operate")[webNode] == 2
	})
	if n := h.gate.calls("operate")[apiNode]; n != 0 {
		t.Errorf("db's update operated on api (restart_on error) %d times, want none", n)
	}

	// An operator's restart of db is a non-error stop too.
	h.ok(h.act(db, `{"restart": {}}`))
	h.until("web stopped and started again after db's restart", false, func() bool {
		st, _ := h.runState(web.ID)
		return st == model.RunRunning && h.gate.calls("operate")[webNode] == 4
	})
	if n := h.gate.calls("operate")[apiNode]; n != 0 {
		t.Errorf("db's restart operated on api (restart_on error) %d times, want none", n)
	}
}

// crashAfterFirstStep replaces the harness's engine with one whose store
// dies once the first step of a dependency cascade has ended: the agent
// dies between two steps. The channel closes when it has died.
func (h *harness) crashAfterFirstStep() <-chan struct{} {
	h.t.Helper()
	died := make(chan struct{})
	var once sync.Once
	id := h.eng.ID()
	h.crash()
	h.restart(id, func(c *engine.Config) {
		c.AfterDependencyStep = func(deps.Step) {
			once.Do(func() {
				h.crashes.kill()
				close(died)
			})
		}
	})
	return died
}

// finishCutCascade checks a cascade of db's cut short by a crash (first
// stopped, next still running), restarts the agent, and checks that its
// reconciliation stops next with cause dependency, naming db.
func (h *harness) finishCutCascade(first, next *model.Cluster) {
	h.t.Helper()
	if st, _ := h.runState(first.ID); st != model.RunOffline {
		h.t.Fatalf("%s is %s after the first step, want offline", first.Name, st)
	}
	if st, _ := h.runState(next.ID); st != model.RunRunning {
		h.t.Fatalf("%s is %s when the agent died, want still running (the cascade cut short)", next.Name, st)
	}
	h.restart(h.eng.ID(), nil)
	h.until(next.Name+" stops after the restart", false, h.inState(next, model.RunOffline))
	if r := model.RunDataOf(h.getCluster(next.ID)); r.Cause != model.StopByDependency || !strings.Contains(r.Reason, "db") {
		h.t.Errorf("%s stopped with cause %q (%q), want dependency naming db", next.Name, r.Cause, r.Reason)
	}
}

func (h *harness) waitDied(died <-chan struct{}) {
	h.t.Helper()
	select {
	case <-died:
	case <-time.After(20 * time.Second):
		h.t.Fatal("the cascade's first step did not end within 20s")
	}
}

// TestDependencyCascadeSurvivesCrash: the agent dies after the first step
// of an operator's stop of db (web, the leaf, stopped; app not yet). The
// next agent's reconciliation at start-up finishes the cascade: app stops
// with cause dependency, as the dead agent would have stopped it.
func TestDependencyCascadeSurvivesCrash(t *testing.T) {
	h, db, app, web := newChain(t, "restart")
	died := h.crashAfterFirstStep()

	a, err := h.act(db, `{"stop": {}}`)
	if err != nil {
		t.Fatal(err)
	}
	h.waitDied(died)
	h.crash()
	h.finishCutCascade(web, app)
	h.ok(a, nil)
	if r := model.RunDataOf(h.getCluster(db.ID)); r.Cause != model.StopByOperator {
		t.Errorf("db's stop cause is %q, want operator", r.Cause)
	}

	// db back: the dependency-stopped clusters start again, dependencies
	// first, through the health round.
	h.ok(h.act(db, `{"start": {}}`))
	h.until("web runs again", true, h.inState(web, model.RunRunning))
}

// TestDependencyMilestoneSurvivesCrash: the agent dies after the first
// step of entering `none` (web stopped); the next agent enters it again on
// the graph as it is, stopping app and db, and records it reached.
func TestDependencyMilestoneSurvivesCrash(t *testing.T) {
	h, db, app, web := newChain(t, "error")
	died := h.crashAfterFirstStep()

	if _, _, err := h.eng.EnterMilestone(h.ctx(), caller, "none"); err != nil {
		t.Fatal(err)
	}
	h.waitDied(died)
	h.crash()
	if st, _ := h.runState(db.ID); st != model.RunRunning {
		t.Fatalf("db is %s when the agent died, want still running (the milestone cut short)", st)
	}

	h.restart(h.eng.ID(), nil)
	for _, cl := range []*model.Cluster{web, app, db} {
		h.until(cl.Name+" stops", false, h.inState(cl, model.RunOffline))
		if r := model.RunDataOf(h.getCluster(cl.ID)); r.Cause != model.StopByMilestone {
			t.Errorf("%s stopped with cause %q, want milestone", cl.Name, r.Cause)
		}
	}
	h.until("the milestone is recorded reached", false, func() bool {
		evs, err := h.store.ListEvents(h.ctx(), store.ListOpts{Project: caller.Project})
		if err != nil {
			t.Fatal(err)
		}
		for _, ev := range evs {
			if ev.Action == "MILESTONE_ENTER" && ev.Status == "reached" {
				return true
			}
		}
		return false
	})
}

// idle waits until no action of cl's is under way.
func (h *harness) idle(cl *model.Cluster) {
	h.t.Helper()
	h.until(cl.Name+" has no action under way", false, func() bool {
		active, err := h.store.ActiveActions(h.ctx(), cl.ID)
		if err != nil {
			h.t.Fatal(err)
		}
		return len(active) == 0
	})
}

// TestDependencyRoundLeavesACascadeAlone: a health round that runs between
// two steps of a cascade (web stopped by an operator's stop of db, app not
// yet) does not start web again, although web's group, app, still runs:
// the cascade holds the project until its last step. The round is taken
// from the cascade's own step hook, so it lands there every time.
func TestDependencyRoundLeavesACascadeAlone(t *testing.T) {
	h, db, app, web := newChain(t, "restart")
	id := h.eng.ID()
	h.crash()
	var once sync.Once
	round := make(chan error, 1)
	h.restart(id, func(c *engine.Config) {
		c.AfterDependencyStep = func(deps.Step) {
			once.Do(func() { round <- h.eng.CheckHealth(context.Background()) })
		}
	})

	h.ok(h.act(db, `{"stop": {}}`))
	select {
	case err := <-round:
		if err != nil {
			t.Fatalf("the health round between the steps: %v", err)
		}
	default:
		t.Fatal("no health round ran between the cascade's steps")
	}
	h.idle(web)
	for _, cl := range []*model.Cluster{web, app} {
		if st, reason := h.runState(cl.ID); st != model.RunOffline {
			t.Errorf("%s is %s (%q) after db's stop, want offline", cl.Name, st, reason)
		}
	}
}

// TestDependencyReconciliationStopsBeforeStarting: the agent died after the
// first step of an operator's stop of db (web stopped, app still running).
// The next agent's reconciliation at start-up stops app, and does not start
// web meanwhile on the graph it read half-way, where app still ran.
func TestDependencyReconciliationStopsBeforeStarting(t *testing.T) {
	h, db, app, web := newChain(t, "restart")
	died := h.crashAfterFirstStep()

	if _, err := h.act(db, `{"stop": {}}`); err != nil {
		t.Fatal(err)
	}
	h.waitDied(died)
	h.crash()
	if st, _ := h.runState(app.ID); st != model.RunRunning {
		t.Fatalf("app is %s when the agent died, want still running (the cascade cut short)", st)
	}

	h.restart(h.eng.ID(), nil)
	h.until("app stops after the restart", false, h.inState(app, model.RunOffline))
	h.idle(web)
	if st, reason := h.runState(web.ID); st != model.RunOffline {
		t.Errorf("web is %s (%q) once app stopped, want offline", st, reason)
	}
}

// newChain starts a harness with three one-node clusters, web requiring
// app and app requiring db, whose groups take the action onFault (error,
// restart, ...) when what they require goes down.
func newChain(t *testing.T, onFault string) (h *harness, db, app, web *model.Cluster) {
	t.Helper()
	h = newHarness(t, nil)
	h.profile("p")
	db = h.cluster("db", 1, 60)
	app = h.cluster("app", 1, 60)
	web = h.cluster("web", 1, 60)
	h.depend(app, "database", "require_all", onFault, db.ID)
	h.depend(web, "application", "require_all", onFault, app.ID)
	return h, db, app, web
}

// TestDependencyEventsTakeTurns: db's recovery, seen while the cascade of
// its fault is half-way (web stopped, app not yet), is decided once that
// cascade has ended, on the graph it left: app starts, then web. Decided
// at once, on the half-way graph where app still ran, it had nothing to
// start, and the fault's next step left app and web stopped with db
// running.
func TestDependencyEventsTakeTurns(t *testing.T) {
	h, db, app, web := newChain(t, "restart")
	id := h.eng.ID()
	h.crash()
	var mu sync.Mutex
	var steps []string
	recovered := make(chan error, 1)
	h.restart(id, func(c *engine.Config) {
		c.AfterDependencyStep = func(st deps.Step) {
			mu.Lock()
			steps = append(steps, string(st.Op)+" "+st.Cluster)
			first := len(steps) == 1
			mu.Unlock()
			// Not a sync.Once: a recovery taken at once steps while the
			// first call still waits, and must not wait for it.
			if first {
				// The fault's first step has ended: db recovers now, and
				// the fault's next step waits until the recovery's
				// cascade waits its turn, or (taken at once) has ended.
				mine, _ := h.eng.Cascades(db.Project)
				fresh, err := h.store.GetCluster(context.Background(), db.ID)
				if err == nil {
					err = h.eng.Recover(context.Background(), fresh)
				}
				recovered <- err
				deadline := time.Now().Add(20 * time.Second)
				for time.Now().Before(deadline) {
					underWay, queued := h.eng.Cascades(db.Project)
					if queued > 0 || underWay <= mine {
						return
					}
					time.Sleep(5 * time.Millisecond)
				}
			}
		}
	})

	if err := h.eng.Fault(h.ctx(), h.getCluster(db.ID)); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-recovered:
		if err != nil {
			t.Fatalf("db's recovery: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the fault's cascade took no step within 20s")
	}
	h.until("both cascades end", false, func() bool {
		underWay, _ := h.eng.Cascades(db.Project)
		return underWay == 0
	})
	for _, cl := range []*model.Cluster{db, app, web} {
		if st, reason := h.runState(cl.ID); st != model.RunRunning {
			t.Errorf("%s is %s (%q) once db recovered, want running", cl.Name, st, reason)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if got, want := strings.Join(steps, ", "), "stop web, stop app, start app, start web"; got != want {
		t.Errorf("steps %q, want %q: the fault's, then the recovery's", got, want)
	}
}

// TestDependencyStaleStartsAreNotTaken: a cascade's start steps are decided
// when the cascade begins and taken one after the other; an operator may
// act in between. db's recovery starts app, then web; after app starts,
// the operator stops web itself, or db (which takes app down again).
// web's start, decided before, must then not be taken: it would override
// the operator's stop, or run web on a stopped app.
func TestDependencyStaleStartsAreNotTaken(t *testing.T) {
	for _, tc := range []struct {
		name     string
		operator func(h *harness, db, app, web *model.Cluster)
		check    func(t *testing.T, h *harness, db, app, web *model.Cluster)
	}{
		{
			name:     "operator stops web",
			operator: func(h *harness, db, app, web *model.Cluster) { h.ok(h.act(web, `{"stop": {}}`)) },
			check: func(t *testing.T, h *harness, db, app, web *model.Cluster) {
				if r := model.RunDataOf(h.getCluster(web.ID)); !r.Stopped || r.Cause != model.StopByOperator {
					t.Errorf("web's run data %+v, want stopped by the operator", r)
				}
				if st, _ := h.runState(app.ID); st != model.RunRunning {
					t.Errorf("app is %s, want running", st)
				}
			},
		},
		{
			name:     "operator stops db",
			operator: func(h *harness, db, app, web *model.Cluster) { h.ok(h.act(db, `{"stop": {}}`)) },
			check: func(t *testing.T, h *harness, db, app, web *model.Cluster) {
				if st, _ := h.runState(app.ID); st != model.RunOffline {
					t.Errorf("app is %s with db stopped by the operator, want offline", st)
				}
				if st, reason := h.runState(web.ID); st != model.RunOffline || !strings.Contains(reason, "app") {
					t.Errorf("web is %s (%q) with app offline, want offline waiting on app", st, reason)
				}
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h, db, app, web := newChain(t, "restart")
			id := h.eng.ID()
			h.crash()
			var mu sync.Mutex
			var steps []string
			acted := make(chan struct{})
			h.restart(id, func(c *engine.Config) {
				c.AfterDependencyStep = func(st deps.Step) {
					mu.Lock()
					steps = append(steps, string(st.Op)+" "+st.Cluster)
					mu.Unlock()
					if st.Op == deps.OpStart && st.Cluster == app.Name {
						tc.operator(h, db, app, web)
						close(acted)
					}
				}
			})
			if err := h.eng.Fault(h.ctx(), h.getCluster(db.ID)); err != nil {
				t.Fatal(err)
			}
			h.until("the fault's cascade ends", false, func() bool {
				underWay, _ := h.eng.Cascades(db.Project)
				return underWay == 0
			})
			if err := h.eng.Recover(h.ctx(), h.getCluster(db.ID)); err != nil {
				t.Fatal(err)
			}
			select {
			case <-acted:
			case <-time.After(20 * time.Second):
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("the recovery did not start app within 20s (steps %q)", steps)
			}
			h.until("the recovery's cascade ends", false, func() bool {
				underWay, _ := h.eng.Cascades(db.Project)
				return underWay == 0
			})
			tc.check(t, h, db, app, web)
			if n := h.nodes(web.ID)[0]; n.Status == model.NodeActive {
				t.Errorf("web's node runs (%s): the recovery's stale start of web was taken", n.StatusReason)
			}
		})
	}
}
