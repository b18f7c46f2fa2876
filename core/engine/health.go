package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// Keys the engine keeps in node data for the restart supervisor.
const (
	dataFailedAt       = "failed_at"       // RFC 3339 time the node was found dead
	dataFailedComplete = "failed_complete" // the dead node's work had ended successfully
	dataRestarts       = "restarts"        // {"profile": id, "count": n, "at": [RFC 3339 times]}
	dataNoRestart      = "restart_refused" // why the supervisor will not restart it
)

// healthLoop checks every cluster's nodes at the configured interval, from
// start-up on: a node that died while the agent was down is found at once.
func (e *Engine) healthLoop(ctx context.Context) {
	defer e.wg.Done()
	t := time.NewTicker(e.cfg.CheckInterval)
	defer t.Stop()
	for {
		if err := e.CheckHealth(ctx); err != nil && ctx.Err() == nil {
			e.log.Error("health check", "error", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-e.healthNow:
		}
	}
}

// CheckHealth runs one round of health checks and restart decisions over
// every cluster that has no action running and that this agent holds the
// health claim of: agents sharing a store split the clusters between them,
// so no two agents check, and write, the same nodes. A driver's report of a
// dead node reaches only the agent whose plugin started it, so that agent
// takes the node's cluster over and checks it at once.
func (e *Engine) CheckHealth(ctx context.Context) error {
	clusters, err := e.store.ListClusters(ctx, store.ListOpts{})
	if err != nil {
		return err
	}
	reported, err := e.reportedClusters(ctx)
	if err != nil {
		return err
	}
	e.cfg.Metrics.healthRound()
	now := e.cfg.Now()
	until := now.Add(e.healthClaim())
	var idle []*model.Cluster
	var claim []string
	for _, cl := range clusters {
		active, err := e.store.ActiveActions(ctx, cl.ID)
		if err != nil {
			return err
		}
		if len(active) > 0 || cl.Status == model.ClusterInit || cl.Status == model.ClusterDeleting {
			continue // the running action owns the cluster's nodes now
		}
		if r := model.RunDataOf(cl); r.Stopped || r.Maintenance {
			continue // its workloads were stopped on purpose
		}
		idle = append(idle, cl)
		if reported[cl.ID] {
			if err := e.store.TakeHealth(ctx, cl.ID, e.cfg.EngineID, until); err != nil {
				return err
			}
		} else {
			claim = append(claim, cl.ID)
		}
	}
	claimed, err := e.store.ClaimHealth(ctx, claim, e.cfg.EngineID, now, until)
	if err != nil {
		return err
	}
	mine := map[string]bool{}
	for _, id := range claimed {
		mine[id] = true
	}
	hosts, err := e.hostsByName(ctx)
	if err != nil {
		return err
	}
	// A host checks its own host-local nodes in every cluster: no other
	// agent can reach them.
	here := map[string]bool{}
	if e.isHost() {
		ids, err := e.store.HostClusters(ctx, e.cfg.HostName)
		if err != nil {
			return err
		}
		for _, id := range ids {
			here[id] = true
		}
	}
	checked := map[string]bool{}
	for _, cl := range idle {
		own := mine[cl.ID] || reported[cl.ID]
		if !own && !here[cl.ID] {
			continue
		}
		checked[cl.ID] = true
		if err := e.checkCluster(ctx, cl, reported[cl.ID], own); err != nil && ctx.Err() == nil {
			e.log.Warn("health check of a cluster failed", "cluster", cl.Name, "error", err)
		}
		switch {
		case own && isGlobal(cl):
			if err := e.globalSync(ctx, cl); err != nil && ctx.Err() == nil {
				e.log.Warn("global cluster sync failed", "cluster", cl.Name, "error", err)
			}
		case own && monitored(cl) && e.runsMonitor(ctx, cl):
			// The instance monitors move a failover cluster, not the
			// replicated cluster's host moves: each agent host runs
			// its own below for a host-local profile; this agent runs
			// every driver host's for any other.
			if remote, err := e.monitorRemote(ctx, cl); err != nil || !remote {
				break
			}
			if err := e.remoteMonitorRound(ctx, cl, hosts); err != nil && ctx.Err() == nil {
				e.log.Warn("instance monitor round failed", "cluster", cl.Name, "error", err)
			}
		case own:
			if err := e.moveOffHosts(ctx, cl, hosts); err != nil && ctx.Err() == nil {
				e.log.Warn("moving nodes off their hosts failed", "cluster", cl.Name, "error", err)
			}
		}
	}
	// A cluster skipped this round (an action runs on it) is read again
	// next time anyway; forgetting it bounds what is kept to what is
	// checked.
	e.checks.keepOnly(checked)
	if e.isHost() {
		for _, cl := range idle {
			if !monitored(cl) {
				continue
			}
			if err := e.monitorRound(ctx, cl, hosts); err != nil && ctx.Err() == nil {
				e.log.Warn("instance monitor round failed", "cluster", cl.Name, "host", e.cfg.HostName, "error", err)
			}
		}
	}
	// Every agent looks at the whole graph: a start it submits for a
	// cluster another agent started first is refused as busy, harmlessly.
	if err := e.reevaluate(ctx, clusters); err != nil && ctx.Err() == nil {
		e.log.Warn("dependency re-evaluation failed", "error", err)
	}
	return nil
}

// checkCluster checks a cluster's nodes; reported says a driver reported
// one of them dead, which a health policy's interval does not hold back
// (its LIFECYCLE_EVENTS mode is these reports). all says this engine holds
// the cluster's health claim and checks every node, not only the
// host-local nodes of its own host.
func (e *Engine) checkCluster(ctx context.Context, cl *model.Cluster, reported, all bool) error {
	reg, governed, err := e.healthRegistry(ctx, cl)
	if err != nil {
		return err
	}
	if governed && !e.healthDue(cl.ID, reg, e.cfg.Now()) && !reported {
		return nil
	}
	// The round reads what a check needs of every node, documents as the
	// stored JSON the driver's wire carries as it is, and only when they
	// changed since the last round; a node is read whole only when its
	// check says something the engine acts on.
	read, err := e.checks.read(ctx, e.store, cl.ID)
	if err != nil {
		return err
	}
	allActive := !slices.ContainsFunc(read.nodes, func(n *model.CheckNode) bool { return n.Status != model.NodeActive })
	if err := e.recovered(ctx, cl, allActive); err != nil {
		return err
	}
	now := e.cfg.Now()
	var changed []*model.Node
	var dead []*model.Node
	// refreshed are nodes whose check changed their data only: written,
	// without an event.
	var refreshed []*model.Node
	for profileID, members := range read.byProfile {
		spec, err := e.specFor(ctx, profileID)
		if err != nil {
			return err
		}
		checked := e.checks.group(read, groupKey{profile: profileID, cluster: cl.Name, all: all}, func() checkGroup {
			var g checkGroup
			for _, n := range members {
				if e.checksHere(n.Host, spec.Type, all) {
					g.nodes = append(g.nodes, n)
				}
			}
			g.batches = e.checkBatches(cl, g.nodes)
			return g
		})
		group := checked.nodes
		if len(group) == 0 {
			continue
		}
		byID, err := e.checkInBatches(ctx, cl, spec, checked.batches, len(group), now)
		if err != nil {
			return err
		}
		// The nodes read whole: under a health policy every node checked
		// (its modes look at more than the driver's verdict); otherwise
		// those the driver found unhealthy, returned data for, or found
		// healthy while ERROR (back by itself?). A healthy ACTIVE node
		// with nothing new, the common case, costs nothing more.
		var ids []string
		for _, n := range group {
			r, ok := byID[n.ID]
			if ok && r.Err == nil && (governed || !r.Healthy || r.Data != nil || n.Status == model.NodeError) {
				ids = append(ids, n.ID)
			}
		}
		if len(ids) == 0 {
			continue
		}
		read, err := e.store.GetNodes(ctx, ids)
		if err != nil {
			return err
		}
		whole := make(map[string]*model.Node, len(read))
		for _, n := range read {
			whole[n.ID] = n
		}
		full := make([]*model.Node, 0, len(read))
		for _, id := range ids {
			// A node deleted, or taken by an action, since the round
			// began is left to what took it.
			if n := whole[id]; n != nil && (n.Status == model.NodeActive || n.Status == model.NodeError) {
				full = append(full, n)
			}
		}
		if governed {
			// The health policy's modes and conditional decide.
			ok := map[string]sdk.Result{}
			for id, r := range byID {
				if r.Err == nil {
					ok[id] = r
				}
			}
			healthy, reasons := e.policyVerdicts(ctx, reg, spec.Type, full, ok, now)
			for id, h := range healthy {
				r := byID[id]
				r.Healthy = h
				if !h {
					r.Reason = reasons[id]
				}
				byID[id] = r
			}
		}
		for _, n := range full {
			r := byID[n.ID]
			if refreshData(n, r.Data) {
				n.UpdatedAt = &now
				refreshed = append(refreshed, n)
			}
			switch {
			case r.Healthy && n.Status == model.NodeError && n.Data[dataFailedAt] != nil:
				// Back by itself (or recovered outside the supervisor).
				n.Status, n.StatusReason = model.NodeActive, "Check: Node is ACTIVE."
				delete(n.Data, dataFailedAt)
				delete(n.Data, dataFailedComplete)
				delete(n.Data, dataNoRestart)
				changed = append(changed, n)
			case !r.Healthy && n.Status == model.NodeActive:
				n.Status, n.StatusReason = model.NodeError, "Check: Node is not ACTIVE: "+r.Reason
				n.Data[dataFailedAt] = now.UTC().Format(time.RFC3339Nano)
				n.Data[dataFailedComplete] = r.Completed
				delete(n.Data, dataNoRestart)
				changed = append(changed, n)
				dead = append(dead, n)
			case !r.Healthy:
				dead = append(dead, n)
			}
		}
	}
	var only []*model.Node
	for _, n := range refreshed {
		if !slices.Contains(changed, n) {
			only = append(only, n)
		}
	}
	if len(only) > 0 {
		if err := e.store.UpdateNodes(ctx, only); err != nil {
			return err
		}
	}
	if len(changed) > 0 {
		if err := e.store.UpdateNodes(ctx, changed); err != nil {
			return err
		}
		var events []*model.Event
		for _, n := range changed {
			level := model.LevelInfo
			if n.Status == model.NodeError {
				level = model.LevelWarning
			}
			events = append(events, &model.Event{ID: e.rowID(), Timestamp: now, OID: n.ID, OName: n.Name, OType: "NODE", ClusterID: cl.ID,
				User: cl.User, Project: cl.Project, Action: "HEALTH_CHECK", Status: n.Status, StatusReason: n.StatusReason, Level: level})
		}
		if err := e.store.CreateEvents(ctx, events); err != nil {
			return err
		}
		if err := e.settle(ctx, cl.ID, "CLUSTER_HEALTH", nil, nil); err != nil {
			return err
		}
		if slices.ContainsFunc(changed, func(n *model.Node) bool { return n.Status == model.NodeError }) {
			if err := e.faulted(ctx, cl); err != nil {
				return err
			}
		}
	}
	var recovery *model.HealthRegistry
	if governed {
		recovery = &reg
	}
	if isGlobal(cl) {
		if dead, err = e.restartableInPlace(ctx, dead); err != nil {
			return err
		}
	}
	return e.superviseRestarts(ctx, cl, dead, now, recovery)
}

// checkInBatches checks size nodes of a cluster in the calls checkBatches
// cut them into (bounded in nodes and bytes), CheckCalls of them at
// once, so a large cluster never makes a message gRPC refuses and its
// round takes a fraction of the time. A call that fails (the plugin's
// error, a message too large, CheckCallTimeout passed) costs only its
// nodes: they are left as they are this round, and the failure is logged
// and recorded as the cluster's event naming the batch.
func (e *Engine) checkInBatches(ctx context.Context, cl *model.Cluster, spec sdk.Spec, batches []sdk.NodeBatch, size int, now time.Time) (map[string]sdk.Result, error) {
	out := make(map[string]sdk.Result, size)
	var mu sync.Mutex
	// failed holds each failed batch's event at the batch's place, so
	// the events are written in batch order whatever order calls end in.
	failed := make([]*model.Event, len(batches))
	g := errgroup.Group{}
	g.SetLimit(e.cfg.CheckCalls)
	for i, b := range batches {
		g.Go(func() error {
			cctx, cancel := context.WithTimeout(ctx, e.cfg.CheckCallTimeout)
			defer cancel()
			res, err := e.callDriver(cctx, spec.Type, "check", func(c *sdk.Client) ([]sdk.Result, error) {
				return c.BatchOf(cctx, sdk.CallCheck, spec, b)
			})
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				what := fmt.Sprintf("%d nodes", b.Len())
				if b.Len() == 1 {
					what = "1 node"
				}
				reason := fmt.Sprintf("Check of %s (batch %d of %d) failed: %v", what, i+1, len(batches), err)
				e.logger(ctx).Warn("health check batch failed", "cluster", cl.Name, "nodes", b.Len(), "batch", i+1, "batches", len(batches), "error", err)
				failed[i] = &model.Event{ID: e.rowID(), Timestamp: now, OID: cl.ID, OName: cl.Name, OType: "CLUSTER", ClusterID: cl.ID,
					User: cl.User, Project: cl.Project, Action: "HEALTH_CHECK", Status: cl.Status, StatusReason: reason, Level: model.LevelWarning}
				return nil
			}
			for _, r := range res {
				out[r.ID] = r
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	if failed = slices.DeleteFunc(failed, func(ev *model.Event) bool { return ev == nil }); len(failed) > 0 {
		if err := e.store.CreateEvents(ctx, failed); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// checkBatches converts a group of a cluster's nodes for the wire and
// splits them into check calls of bounded size (CheckBatchNodes nodes,
// CheckBatchBytes bytes).
func (e *Engine) checkBatches(cl *model.Cluster, group []*model.CheckNode) []sdk.NodeBatch {
	wire := make([]sdk.JSONNode, len(group))
	for i, n := range group {
		wire[i] = sdk.JSONNode{ID: n.ID, Name: n.Name, Index: n.Index, ClusterID: n.ClusterID, ClusterName: cl.Name, PhysicalID: n.PhysicalID,
			State: n.State, Data: n.Data, Metadata: n.Metadata}
	}
	return sdk.SplitJSONNodes(wire, e.cfg.CheckBatchNodes, e.cfg.CheckBatchBytes)
}

// superviseRestarts applies the cluster's restart settings to its dead nodes.
// A health policy's registry (reg, nil without one) names the recovery
// operation and its parameters.
func (e *Engine) superviseRestarts(ctx context.Context, cl *model.Cluster, dead []*model.Node, now time.Time, reg *model.HealthRegistry) error {
	pol := orchestrator.ParseRestart(cl.Config)
	for _, n := range dead {
		if _, refused := n.Data[dataNoRestart]; refused {
			continue
		}
		failedAt := now
		if s, ok := n.Data[dataFailedAt].(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				failedAt = t
			}
		}
		completed, _ := n.Data[dataFailedComplete].(bool)
		f := orchestrator.Failure{Completed: completed, At: failedAt, Profile: n.ProfileID}
		hist := restartHistory(n)
		d := orchestrator.DecideRestart(pol, f, hist)
		if !d.Restart {
			n.Data[dataNoRestart] = d.Reason
			n.StatusReason = d.Reason
			if err := e.store.UpdateNodes(ctx, []*model.Node{n}); err != nil {
				return err
			}
			e.log.Warn("node not restarted", "cluster", cl.Name, "node", n.Name, "refusal", d.Refusal, "reason", d.Reason)
			_ = e.store.CreateEvents(ctx, []*model.Event{{ID: e.rowID(), Timestamp: now, OID: n.ID, OName: n.Name, OType: "NODE", ClusterID: cl.ID,
				User: cl.User, Project: cl.Project, Action: "RESTART", Status: "refused", StatusReason: d.Reason, Level: model.LevelError}})
			continue
		}
		if now.Before(d.At) {
			e.wakeHealthAt(d.At)
			continue
		}
		op := "RECREATE"
		if prof, err := e.store.GetProfile(ctx, n.ProfileID); err == nil {
			if comp, ok := e.plugins.Component("profile", prof.Type); ok && len(comp.Operations) > 0 {
				op = comp.Operations[0]
			}
		}
		in := model.RecoverInputs{Operation: op, Restart: true}
		if reg != nil {
			in.Operation, in.OperationParams = reg.RecoverAction, reg.RecoverParams
			in.DeleteTimeout, in.ForceRecreate = &reg.NodeDeleteTimeout, &reg.NodeForceRecreate
		}
		a, err := e.newAction(Caller{User: cl.User, Project: cl.Project}, model.NodeRecoverAction, n.ID, cl.ID, in, 0)
		if err != nil {
			return err
		}
		a.Cause = "Restart Supervisor"
		// The restart is recorded on the node before its action exists: the
		// action rewrites the node's data when it ends, from a read of its
		// own, and a record written after the submit could land before that
		// read or be overwritten by it (a restart counted once in two).
		fresh, err := e.store.GetNode(ctx, n.ID)
		if err != nil {
			return err
		}
		before := restartHistory(fresh)
		failed := map[string]any{}
		for _, k := range []string{dataFailedAt, dataFailedComplete} {
			if v, ok := fresh.Data[k]; ok {
				failed[k] = v
			}
		}
		setRestartHistory(fresh, orchestrator.Record(pol, hist, n.ProfileID, now))
		delete(fresh.Data, dataFailedAt)
		delete(fresh.Data, dataFailedComplete)
		if err := e.store.UpdateNodes(ctx, []*model.Node{fresh}); err != nil {
			return err
		}
		if err := e.submit(ctx, a, false, n.ProfileID, nil); err != nil {
			// Busy or unhealthy plugin: no restart happened, so none is
			// counted; the next round tries again.
			setRestartHistory(fresh, before)
			maps.Copy(fresh.Data, failed)
			if err := e.store.UpdateNodes(ctx, []*model.Node{fresh}); err != nil {
				return err
			}
			continue
		}
		e.cfg.Metrics.restart()
		e.log.Info("restarting dead node", "cluster", cl.Name, "node", n.Name, "action", a.ID)
	}
	return nil
}

func restartHistory(n *model.Node) orchestrator.History {
	m, _ := n.Data[dataRestarts].(map[string]any)
	h := orchestrator.History{}
	h.Profile, _ = m["profile"].(string)
	list, _ := m["at"].([]any)
	for _, v := range list {
		if s, ok := v.(string); ok {
			if t, err := time.Parse(time.RFC3339Nano, s); err == nil {
				h.Restarts = append(h.Restarts, t)
			}
		}
	}
	h.Count = len(h.Restarts)
	if c, ok := m["count"].(float64); ok && int(c) > h.Count {
		h.Count = int(c)
	}
	return h
}

func setRestartHistory(n *model.Node, h orchestrator.History) {
	at := make([]any, len(h.Restarts))
	for i, t := range h.Restarts {
		at[i] = t.UTC().Format(time.RFC3339Nano)
	}
	n.Data[dataRestarts] = map[string]any{"profile": h.Profile, "at": at, "count": h.Count}
}

// healthClaim is how long a health claim lasts: a few rounds, so one slow
// round does not hand the cluster to another agent, and an agent that died
// is replaced within seconds.
func (e *Engine) healthClaim() time.Duration {
	return max(3*e.cfg.CheckInterval, time.Second)
}

// reportedClusters takes the nodes drivers reported down since the last
// round and returns their clusters.
func (e *Engine) reportedClusters(ctx context.Context) (map[string]bool, error) {
	e.suspectMu.Lock()
	ids := make([]string, 0, len(e.suspects))
	for id := range e.suspects {
		ids = append(ids, id)
	}
	clear(e.suspects)
	e.suspectMu.Unlock()
	if len(ids) == 0 {
		return nil, nil
	}
	nodes, err := e.store.GetNodes(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := map[string]bool{}
	for _, n := range nodes {
		out[n.ClusterID] = true
	}
	return out, nil
}

// wakeHealthAt makes the health loop run again at t, so a restart delay
// shorter than the check interval is honoured; a second call for the same
// t arms no second timer.
func (e *Engine) wakeHealthAt(t time.Time) {
	key := t.UnixNano()
	e.wakeMu.Lock()
	if _, armed := e.wakes[key]; armed {
		e.wakeMu.Unlock()
		return
	}
	e.wakes[key] = struct{}{}
	e.wakeMu.Unlock()
	d := time.Until(t)
	if d < 0 {
		d = 0
	}
	time.AfterFunc(d, func() {
		e.wakeMu.Lock()
		delete(e.wakes, key)
		e.wakeMu.Unlock()
		select {
		case e.healthNow <- struct{}{}:
		default:
		}
	})
}

// watchDrivers follows the node events of every profile type whose driver
// streams them; an event wakes the health loop at once.
func (e *Engine) watchDrivers(ctx context.Context) {
	for _, c := range e.plugins.Components("profile") {
		e.wg.Add(1)
		go e.watchDriver(ctx, c.Type)
	}
}

func (e *Engine) watchDriver(ctx context.Context, typ string) {
	defer e.wg.Done()
	backoff := time.Second
	for {
		client, _, err := e.plugins.Client(ctx, "profile", typ)
		if err == nil {
			err = client.Watch(ctx, typ, func(ev sdk.NodeEvent) {
				if !ev.Healthy {
					e.log.Debug("driver reports a node down", "type", typ, "node", ev.NodeID, "reason", ev.Reason)
					e.suspectMu.Lock()
					e.suspects[ev.NodeID] = struct{}{}
					e.suspectMu.Unlock()
					select {
					case e.healthNow <- struct{}{}:
					default:
					}
				}
			})
		}
		if ctx.Err() != nil || status.Code(err) == codes.Unimplemented {
			return
		}
		// The plugin restarted or the stream broke: follow it again.
		if err := sleepCtx(ctx, backoff); err != nil {
			return
		}
		backoff = min(backoff*2, 30*time.Second)
	}
}
