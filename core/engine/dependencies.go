package engine

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/deps"
	"github.com/grovehq/grove/core/store"
)

// Dependencies between clusters at run time: the engine reads the graph
// from the store (depSnapshot), asks core/orchestrator/deps what an event
// leads to, and carries the answer out as CLUSTER_STOP and CLUSTER_START
// actions, one after the other in the decision's order (stops leaves
// first). The stops and starts it submits do not propagate again: the
// decision already holds the whole cascade.

// DepState is a cluster's state as the dependency graph sees it: its
// Senlin status and its run data (deps.StateOf), a fault counting as
// offline until the cluster's nodes run again.
func DepState(cl *model.Cluster) deps.State {
	r := model.RunDataOf(cl)
	if r.Fault && !r.Stopped && !r.Maintenance {
		return deps.Offline
	}
	return deps.StateOf(cl.Status, r.Stopped, r.Cause, r.Maintenance)
}

func depState(cl *model.Cluster) deps.State { return DepState(cl) }

// depGraph is one project's dependency graph and its clusters by name.
type depGraph struct {
	project string
	snap    deps.Snapshot
	byName  map[string]*model.Cluster
	// groups is whether any cluster of the project holds a group: without
	// any, nothing propagates.
	groups bool
}

// depSnapshot reads a project's dependency graph through deps.Build, the
// one way the graph is built (the server's views use it too). Path members
// are checked on this agent's host, now (§C.2: a path is evaluated when a
// cluster starts).
func (e *Engine) depSnapshot(ctx context.Context, project string) (*depGraph, error) {
	clusters, err := e.store.ListClusters(ctx, store.ListOpts{Project: project})
	if err != nil {
		return nil, err
	}
	groups, err := e.store.ListDependencies(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := e.store.ListMilestones(ctx, store.ListOpts{Project: project})
	if err != nil {
		return nil, err
	}
	g := &depGraph{project: project, byName: map[string]*model.Cluster{}}
	g.snap = deps.Build(clusters, groups, ms, DepState, func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
	for _, cl := range clusters {
		g.byName[cl.Name] = cl
	}
	for _, c := range g.snap.Clusters {
		if len(c.Groups) > 0 {
			g.groups = true
		}
	}
	return g, nil
}

// setState overrides a cluster's state in the snapshot: the state the
// event starts from.
func (g *depGraph) setState(name string, st deps.State) {
	for i := range g.snap.Clusters {
		if g.snap.Clusters[i].Name == name {
			g.snap.Clusters[i].State = st
		}
	}
}

// decide reads the graph of cl's project and decides ev on it, with cl in
// state from (when not "").
func (e *Engine) decide(ctx context.Context, cl *model.Cluster, from deps.State, ev deps.Event) (*depGraph, deps.Decision, error) {
	g, err := e.depSnapshot(ctx, cl.Project)
	if err != nil || !g.groups {
		return g, deps.Decision{}, err
	}
	if from != "" {
		g.setState(cl.Name, from)
	}
	d, err := deps.Propagate(g.snap, ev)
	return g, d, err
}

// applySteps carries out a decision's steps in order, each an action
// waited for; skip names a cluster whose own step its caller carries out.
// Held clusters get their reason shown.
func (e *Engine) applySteps(ctx context.Context, g *depGraph, steps []deps.Step, skip string) error {
	// While it runs, the health round's reconciliation leaves the project
	// to it.
	e.cascadeBegin(g.project)
	defer e.cascadeEnd(g.project)
	var errs []error
	for _, st := range steps {
		if st.Cluster == skip {
			continue
		}
		cl, ok := g.byName[st.Cluster]
		if !ok {
			continue
		}
		if err := e.runStep(ctx, cl, st); err != nil {
			if ctx.Err() != nil {
				return err
			}
			errs = append(errs, err)
			continue
		}
		if e.cfg.AfterDependencyStep != nil {
			e.cfg.AfterDependencyStep(st)
		}
	}
	return errors.Join(errs...)
}

// runStep submits one step's action, waiting while the cluster is busy
// with another one, and waits for it to end. A step already taken (a stop
// of a stopped cluster, a start of a running one) is skipped: a cascade the
// health round's reconciliation finishes may meet steps another agent, or
// the action that began it, took meanwhile, and a second stop would
// overwrite the first one's cause.
func (e *Engine) runStep(ctx context.Context, cl *model.Cluster, st deps.Step) error {
	fresh, err := e.store.GetCluster(ctx, cl.ID)
	if err != nil {
		return err
	}
	if r := model.RunDataOf(fresh); (st.Op == deps.OpStop && (r.Stopped || r.Maintenance)) || (st.Op == deps.OpStart && depState(fresh) == deps.Running) {
		return nil
	}
	kind := model.ClusterStartAction
	in := model.ClusterRunInputs{Cause: model.StopByDependency}
	if st.Cause == deps.CauseMilestone {
		in.Cause = model.StopByMilestone
	}
	if st.Op == deps.OpStop {
		kind = model.ClusterStopAction
		in.Reason = stopReason(in.Cause)
		if st.Because != "" {
			in.Reason = "Stopped because " + st.Because + "."
		}
	}
	deadline := time.Now().Add(2 * time.Minute)
	for {
		a, err := e.newAction(Caller{User: cl.User, Project: cl.Project}, kind, cl.ID, cl.ID, in, cl.Timeout)
		if err != nil {
			return err
		}
		a.Cause = "Dependency"
		err = e.submit(ctx, a, false, cl.ProfileID, nil)
		if err == nil {
			e.log.Info("dependency step", "cluster", cl.Name, "op", st.Op, "because", st.Because, "action", a.ID)
			end, err := e.Wait(ctx, a.ID)
			if err != nil {
				return err
			}
			if end.Status != model.ActionSucceeded {
				return fmt.Errorf("%s of %s: %s", kind, cl.Name, end.StatusReason)
			}
			return nil
		}
		var ee *Error
		if !errors.As(err, &ee) || ee.Status != 409 || time.Now().After(deadline) {
			return fmt.Errorf("%s of %s: %w", kind, cl.Name, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// propagateAsync decides an event and carries it out in the background:
// the health loop must not wait for other clusters' actions. The event is
// decided once the cascades of the project's earlier events have ended
// (cascadeInBackground).
func (e *Engine) propagateAsync(cl *model.Cluster, from deps.State, ev deps.Event) {
	e.cascadeBegin(cl.Project)
	e.cascadeInBackground(cl.Project, func(ctx context.Context) {
		if err := e.propagate(ctx, cl, from, ev); err != nil && ctx.Err() == nil {
			e.log.Warn("dependency propagation", "cluster", cl.Name, "event", ev.Kind, "error", err)
		}
	})
}

// cascadeInBackground carries out a cascade of the project in the
// background, after the ones this engine began there in the background
// before it, in the order they began; the caller holds the project
// (cascadeBegin, cascadeIdle) and the cascade gives it back when it ends.
//
// Each event-driven cascade decides on the graph it reads when it begins,
// and a graph read while another cascade is half-way through the project
// is half-way too: a database's fault stops web, then app; its recovery,
// decided between the two steps, saw app still running and nothing to
// start, and the fault's next step then left app and web stopped with the
// database running. Taken one after the other, the recovery decides on
// the graph the fault left, and starts app, then web.
func (e *Engine) cascadeInBackground(project string, work func(ctx context.Context)) {
	e.cascadeMu.Lock()
	before := e.cascadeTail[project]
	mine := make(chan struct{})
	e.cascadeTail[project] = mine
	if before != nil {
		e.cascadesQueued[project]++
	}
	e.cascadeMu.Unlock()

	ctx := e.background()
	e.wg.Add(1)
	go func() {
		defer e.wg.Done()
		defer e.cascadeEnd(project)
		defer func() {
			e.cascadeMu.Lock()
			defer e.cascadeMu.Unlock()
			close(mine)
			if e.cascadeTail[project] == mine {
				delete(e.cascadeTail, project)
			}
		}()
		if before != nil {
			select {
			case <-before:
			case <-ctx.Done():
			}
			e.cascadeMu.Lock()
			if e.cascadesQueued[project]--; e.cascadesQueued[project] <= 0 {
				delete(e.cascadesQueued, project)
			}
			e.cascadeMu.Unlock()
			if ctx.Err() != nil {
				return
			}
		}
		work(ctx)
	}()
}

// propagate decides an event and carries out every step.
func (e *Engine) propagate(ctx context.Context, cl *model.Cluster, from deps.State, ev deps.Event) error {
	g, d, err := e.decide(ctx, cl, from, ev)
	if err != nil || g == nil || !g.groups {
		return err
	}
	return e.applySteps(ctx, g, d.Steps, "")
}

// startVerdict says whether cl may start now that an operator asks (§C.2's
// start decision), with the graph it was decided on.
func (e *Engine) startVerdict(ctx context.Context, cl *model.Cluster) (deps.Verdict, error) {
	g, err := e.depSnapshot(ctx, cl.Project)
	if err != nil {
		return deps.Verdict{}, err
	}
	g.setState(cl.Name, deps.Offline)
	return deps.Check(g.snap, cl.Name)
}

// holdCluster records that a cluster waits on its dependencies (or sits in
// a dependency cycle): offline or maintenance with the reason shown.
func (e *Engine) holdCluster(ctx context.Context, clusterID string, v deps.Verdict) error {
	return e.store.InTx(ctx, func(tx store.Store) error {
		cl, err := tx.GetCluster(ctx, clusterID)
		if err != nil {
			return err
		}
		r := model.RunData{Stopped: true, Cause: model.StopByDependency, Reason: waitReason(v)}
		if v.Maintenance {
			r.Maintenance = true
		}
		model.SetRunData(cl, r)
		return tx.UpdateCluster(ctx, cl)
	})
}

func waitReason(v deps.Verdict) string {
	if v.Maintenance {
		return v.Reason
	}
	if v.Reason == "" {
		return "Waiting on its dependencies."
	}
	return "Waiting on " + strings.TrimPrefix(v.Reason, "waiting on ")
}

// afterCreate applies a new cluster's dependencies: one that may not run
// yet has its nodes stopped (they were created to exist, not to run) and
// waits; one that runs is an event its dependents see (an excluded cluster
// coming up, a dependency they waited for).
func (e *Engine) afterCreate(ctx context.Context, a *model.Action, clusterID string) error {
	cl, err := e.store.GetCluster(ctx, clusterID)
	if err != nil {
		return err
	}
	g, err := e.depSnapshot(ctx, cl.Project)
	if err != nil || !g.groups {
		return err
	}
	g.setState(cl.Name, deps.Offline)
	v, err := deps.Check(g.snap, cl.Name)
	if err != nil {
		return err
	}
	if !v.Start {
		if err := e.stopCluster(ctx, a, cl, model.StopByDependency, waitReason(v)); err != nil {
			return err
		}
		return e.holdCluster(ctx, cl.ID, v)
	}
	if depState(cl) == deps.Running {
		e.propagateAsync(cl, deps.Running, deps.Event{Kind: deps.Start, Cluster: cl.Name})
	}
	return nil
}

// reevaluate is the health round's look at the dependency graph: a cluster
// waiting on its dependencies starts once they are satisfied (a path that
// appeared, a dependency that came back while no event said so), and a
// cluster on a dependency cycle goes to maintenance.
func (e *Engine) reevaluate(ctx context.Context, clusters []*model.Cluster) error {
	projects := map[string]bool{}
	for _, cl := range clusters {
		projects[cl.Project] = true
	}
	for p := range projects {
		// A cascade this engine carries out in the project holds it until
		// its last step: its decision already holds what it stops and
		// starts, while the graph between two of its steps is half-way (a
		// dependent stopped, the dependency that takes it down still
		// running). A start taken on that graph would bring the dependent
		// back before the cascade's next step. The next round looks again.
		if !e.cascadeIdle(p) {
			continue
		}
		if err := e.reevaluateProject(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// reevaluateProject is reevaluate's look at one project, which its caller
// took (cascadeIdle): the graph is read while no cascade of this engine is
// half-way through it, and the project is given back at the end, or to
// the reconciliation reconcileProject carries on in the background.
func (e *Engine) reevaluateProject(ctx context.Context, p string) error {
	held := true
	defer func() {
		if held {
			e.cascadeEnd(p)
		}
	}()
	seq := e.cascadeSeq(p)
	g, err := e.depSnapshot(ctx, p)
	if err != nil {
		return err
	}
	if e.cascadeSeq(p) != seq {
		// A cascade began (an event of this round, an operator's stop)
		// while the graph was read, so it may have been read half-way.
		return nil
	}
	owed, err := e.reconcileProject(ctx, p, g)
	if err != nil {
		return err
	}
	if owed {
		// A cascade is still owed stops (one a crash cut short, another
		// agent's under way): the graph is half-way, and the clusters
		// waiting on the ones it stops must not start meanwhile. The
		// reconciliation now holds the project.
		held = false
		return nil
	}
	if !g.groups {
		return nil
	}
	for _, v := range deps.CheckAll(g.snap) {
		cl := g.byName[v.Cluster]
		r := model.RunDataOf(cl)
		switch {
		case v.Maintenance && !r.Maintenance:
			active, err := e.store.ActiveActions(ctx, cl.ID)
			if err != nil || len(active) > 0 {
				continue
			}
			e.log.Warn("dependency cycle", "cluster", cl.Name, "reason", v.Reason)
			a, err := e.newAction(Caller{User: cl.User, Project: cl.Project}, model.ClusterStopAction, cl.ID, cl.ID,
				model.ClusterRunInputs{Cause: model.StopByDependency, Reason: v.Reason, Maintenance: true}, cl.Timeout)
			if err != nil {
				return err
			}
			a.Cause = "Dependency"
			_ = e.submit(ctx, a, false, cl.ProfileID, nil)
		case v.Start && r.Stopped && r.Cause == model.StopByDependency && !r.Maintenance:
			active, err := e.store.ActiveActions(ctx, cl.ID)
			if err != nil || len(active) > 0 {
				continue
			}
			a, err := e.newAction(Caller{User: cl.User, Project: cl.Project}, model.ClusterStartAction, cl.ID, cl.ID,
				model.ClusterRunInputs{Cause: model.StopByDependency}, cl.Timeout)
			if err != nil {
				return err
			}
			a.Cause = "Dependency"
			if err := e.submit(ctx, a, false, cl.ProfileID, nil); err == nil {
				e.log.Info("dependencies satisfied, starting", "cluster", cl.Name, "action", a.ID)
			}
		case !v.Start && r.Stopped && r.Cause == model.StopByDependency && !r.Maintenance && v.Reason != "" && waitReason(v) != r.Reason:
			// Keep the reason shown current.
			if err := e.holdCluster(ctx, cl.ID, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// faulted marks a running cluster whose node died offline until it is
// recovered, and propagates the fault (§C.3: level error).
func (e *Engine) faulted(ctx context.Context, cl *model.Cluster) error {
	if depState(cl) != deps.Running {
		return nil
	}
	err := e.store.InTx(ctx, func(tx store.Store) error {
		fresh, err := tx.GetCluster(ctx, cl.ID)
		if err != nil {
			return err
		}
		r := model.RunDataOf(fresh)
		r.Fault, r.Reason = true, "A node died; the cluster is offline to its dependents until its nodes run again."
		model.SetRunData(fresh, r)
		return tx.UpdateCluster(ctx, fresh)
	})
	if err != nil {
		return err
	}
	e.propagateAsync(cl, deps.Running, deps.Event{Kind: deps.Fault, Cluster: cl.Name})
	return nil
}

// recovered clears a fault once every node of the cluster is ACTIVE again
// (allActive), and propagates its start: what the fault stopped comes back.
func (e *Engine) recovered(ctx context.Context, cl *model.Cluster, allActive bool) error {
	r := model.RunDataOf(cl)
	if !r.Fault || !allActive {
		return nil
	}
	err := e.store.InTx(ctx, func(tx store.Store) error {
		fresh, err := tx.GetCluster(ctx, cl.ID)
		if err != nil {
			return err
		}
		r := model.RunDataOf(fresh)
		r.Fault = false
		if !r.Stopped && !r.Maintenance {
			r = model.RunData{}
		}
		model.SetRunData(fresh, r)
		*cl = *fresh
		return tx.UpdateCluster(ctx, fresh)
	})
	if err != nil {
		return err
	}
	e.log.Info("cluster recovered from a fault", "cluster", cl.Name)
	e.propagateAsync(cl, deps.Running, deps.Event{Kind: deps.Start, Cluster: cl.Name})
	return nil
}

// EnterMilestone brings up a milestone's subgraph (its clusters and what
// they depend on) and stops every other cluster of the project, leaves
// first (§C.5); "all" and "none" are SMF's. It returns the decision at
// once, with the milestone's name, and carries it out in the background,
// each step a CLUSTER_STOP or CLUSTER_START action with its events.
func (e *Engine) EnterMilestone(ctx context.Context, c Caller, ident string) (string, deps.Decision, error) {
	g, err := e.depSnapshot(ctx, c.Project)
	if err != nil {
		return "", deps.Decision{}, err
	}
	name, oid := ident, ident
	if name != "all" && name != "none" {
		m, err := e.store.FindMilestone(ctx, c.Project, ident)
		if err != nil {
			return "", deps.Decision{}, err
		}
		name, oid = m.Name, m.ID
	}
	d, err := deps.Propagate(g.snap, deps.Event{Kind: deps.Milestone, Milestone: name})
	if err != nil {
		return "", deps.Decision{}, BadRequest("%s", err.Error())
	}
	var what []string
	for _, st := range d.Steps {
		what = append(what, string(st.Op)+" "+st.Cluster)
	}
	reason := "Nothing to stop or start."
	if len(what) > 0 {
		reason = strings.Join(what, ", ") + "."
	}
	// The MILESTONE_ENTER event is the milestone's durable intent: until
	// its "reached" event names it, the health round's reconciliation
	// finishes it (an agent that died in the middle of it).
	entered := &model.Event{ID: e.rowID(), Timestamp: e.cfg.Now(), OID: oid, OName: name, OType: "MILESTONE",
		User: c.User, Project: c.Project, Action: milestoneEnter, Status: milestoneEntered, StatusReason: reason, Level: model.LevelInfo}
	if err := e.store.CreateEvents(ctx, []*model.Event{entered}); err != nil {
		return "", deps.Decision{}, err
	}
	e.wg.Add(1)
	e.cascadeBegin(c.Project)
	go func() {
		defer e.wg.Done()
		defer e.cascadeEnd(c.Project)
		e.carryMilestone(e.background(), g, d, entered)
	}()
	return name, d, nil
}

// Milestone events: MILESTONE_ENTER with status entered when an operator
// enters a milestone, and again with status reached, its meta data naming
// the entered event, once every step was taken.
const (
	milestoneEnter   = "MILESTONE_ENTER"
	milestoneEntered = "entered"
	milestoneReached = "reached"
)

// carryMilestone takes a milestone decision's steps, shows why the
// clusters it could not start wait, and records the milestone reached.
func (e *Engine) carryMilestone(ctx context.Context, g *depGraph, d deps.Decision, entered *model.Event) {
	if err := e.applySteps(ctx, g, d.Steps, ""); err != nil {
		e.log.Warn("milestone", "milestone", entered.OName, "error", err)
		return
	}
	for _, v := range d.Held {
		if cl, ok := g.byName[v.Cluster]; ok {
			if err := e.holdCluster(ctx, cl.ID, v); err != nil {
				e.log.Warn("milestone", "milestone", entered.OName, "error", err)
				return
			}
		}
	}
	reached := &model.Event{ID: e.rowID(), Timestamp: e.cfg.Now(), OID: entered.OID, OName: entered.OName, OType: "MILESTONE",
		User: entered.User, Project: entered.Project, Action: milestoneEnter, Status: milestoneReached,
		StatusReason: "Milestone " + entered.OName + " reached.", Level: model.LevelInfo, MetaData: map[string]any{"entered": entered.ID}}
	if err := e.store.CreateEvents(ctx, []*model.Event{reached}); err != nil {
		e.log.Warn("milestone", "milestone", entered.OName, "error", err)
	}
}

// unfinishedMilestone is the project's last milestone entered, when it was
// not reached, or nil.
func (e *Engine) unfinishedMilestone(ctx context.Context, project string) (*model.Event, error) {
	// The newest few are enough: a milestone's reached event follows its
	// entered one, so only milestones entered close together interleave.
	evs, err := e.store.ListEvents(ctx, store.ListOpts{Project: project, Limit: 20, Sort: []store.SortKey{{Key: "timestamp", Desc: true}},
		Filters: map[string][]string{"otype": {"MILESTONE"}, "action": {milestoneEnter}}})
	if err != nil {
		return nil, err
	}
	var last *model.Event
	reached := map[string]bool{}
	for _, ev := range evs {
		switch ev.Status {
		case milestoneEntered:
			if last == nil || ev.Timestamp.After(last.Timestamp) {
				last = ev
			}
		case milestoneReached:
			if id, ok := ev.MetaData["entered"].(string); ok {
				reached[id] = true
			}
		}
	}
	if last == nil || reached[last.ID] {
		return nil, nil
	}
	return last, nil
}

func (e *Engine) cascadeBegin(project string) {
	e.cascadeMu.Lock()
	defer e.cascadeMu.Unlock()
	e.cascades[project]++
	e.cascadesBegun[project]++
}

// cascadeSeq is how many cascades this engine began in the project so far.
func (e *Engine) cascadeSeq(project string) uint64 {
	e.cascadeMu.Lock()
	defer e.cascadeMu.Unlock()
	return e.cascadesBegun[project]
}

func (e *Engine) cascadeEnd(project string) {
	e.cascadeMu.Lock()
	defer e.cascadeMu.Unlock()
	if e.cascades[project]--; e.cascades[project] <= 0 {
		delete(e.cascades, project)
	}
}

// cascadeIdle takes the project for a reconciliation when this engine
// carries out no cascade there; cascadeEnd gives it back.
func (e *Engine) cascadeIdle(project string) bool {
	e.cascadeMu.Lock()
	defer e.cascadeMu.Unlock()
	if e.cascades[project] > 0 {
		return false
	}
	e.cascades[project]++
	return true
}

// reconcileDependencies is the look at every project's dependency graph
// that each health round takes (reevaluate, reconcileProject), for an
// agent without a health loop to take once at start-up.
func (e *Engine) reconcileDependencies(ctx context.Context) error {
	clusters, err := e.store.ListClusters(ctx, store.ListOpts{})
	if err != nil {
		return err
	}
	return e.reevaluate(ctx, clusters)
}

// reconcileProject finishes, in the background, what a cascade cut short
// left undone in a project: a milestone entered and not reached is entered
// again on the graph as it is now; otherwise the stops deps.Reconcile
// finds owed are taken, leaves first. The starts a cascade owes are
// reevaluate's (a cluster stopped by a dependency starts once its groups
// are satisfied), taken in a later round, once no stop is owed. The caller
// holds the project (cascadeIdle); when something is owed the background
// work takes the hold over and gives it back, and reconcileProject
// returns true.
//
// The cascade is level-triggered rather than recorded: the graph's state
// (a cluster's run data says it faulted or was stopped, and why; the
// MILESTONE_ENTER events say which milestone was entered last) is already
// durable, written in the transaction of each change, and the pure rules
// decide from it what is still owed. A journal of remaining steps would
// be a second record of the same facts, one that could disagree with the
// graph after an operator acted in between. What a state cannot hold is a
// refresh, an instant; a CLUSTER_REFRESH cut short is an action, which the
// next agent resumes.
func (e *Engine) reconcileProject(ctx context.Context, project string, g *depGraph) (bool, error) {
	entered, err := e.unfinishedMilestone(ctx, project)
	if err != nil {
		return false, err
	}
	if entered != nil {
		d, err := deps.Propagate(g.snap, deps.Event{Kind: deps.Milestone, Milestone: entered.OName})
		if err != nil {
			// The milestone is gone: nothing left to finish.
			d = deps.Decision{}
		}
		e.log.Info("finishing a milestone", "milestone", entered.OName, "steps", len(d.Steps))
		e.cascadeInBackground(project, func(ctx context.Context) { e.carryMilestone(ctx, g, d, entered) })
		return true, nil
	}
	d := deps.Reconcile(g.snap)
	if len(d.Steps) == 0 {
		return false, nil
	}
	e.log.Info("finishing a dependency cascade", "project", project, "steps", len(d.Steps))
	e.cascadeInBackground(project, func(ctx context.Context) {
		if err := e.applySteps(ctx, g, d.Steps, ""); err != nil {
			e.log.Warn("dependency reconciliation", "project", project, "error", err)
		}
	})
	return true, nil
}

// background is the context for work that outlives the request or action
// that started it.
func (e *Engine) background() context.Context {
	if e.bg == nil {
		return context.Background()
	}
	return e.bg
}
