package engine

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/placement"
	"github.com/grovehq/grove/core/store"
)

// isGlobal says whether a cluster's grove.failover topology is global
// (SwarmKit's global mode): one node per eligible host, its size following
// the hosts instead of a desired capacity.
func isGlobal(cl *model.Cluster) bool {
	f, _ := cl.Config[api.ConfigFailover].(map[string]any)
	t, _ := f["topology"].(string)
	return t == "global"
}

// globalRefusal is the message a manual change of a global cluster's size
// gets.
func globalRefusal(cl *model.Cluster, what string) error {
	return BadRequest("The cluster '%s' is global (grove.failover topology global): it runs one node per eligible host and its desired_capacity follows them, so %s is refused; change its hosts (availability, labels, the placement policy's constraints) instead.", cl.Name, what)
}

// globalSync brings a global cluster towards one node per eligible host
// (§B.4): it reads the hosts of the profile's driver and the nodes on
// them, asks the pure decision (placement.Decide with Global set) what to
// create and shut down, and submits that as one CLUSTER_GLOBAL_SYNC
// action. It runs on the agent holding the cluster's health claim, for a
// cluster with no action, in place of moving nodes off their hosts: a
// global cluster's node is never replaced on another host.
func (e *Engine) globalSync(ctx context.Context, cl *model.Cluster) error {
	// The health round may just have started a recovery: it owns the
	// cluster until it ends.
	if busy, err := e.store.ActiveActions(ctx, cl.ID); err != nil || len(busy) > 0 {
		return err
	}
	props, _, err := e.boundPlacement(ctx, cl)
	if err != nil {
		return err
	}
	hosts, err := e.placementSnapshot(ctx, cl)
	if err != nil {
		return err
	}
	if hosts.Err != "" {
		e.log.Warn("a global cluster waits for hosts", "cluster", cl.Name, "why", hosts.Err)
		return nil
	}
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	byName := make(map[string]*model.Node, len(nodes))
	for _, n := range nodes {
		byName[n.Name] = n
	}
	open := map[string]bool{}
	for _, h := range hosts.Hosts {
		open[h.Name] = h.State == model.HostUp && h.Availability == model.HostActive
	}
	s := decisionSnapshot(cl.Name, props, hosts)
	s.Global = true
	onHost := map[string]bool{}
	for i, in := range s.Instances {
		if in.Cluster != cl.Name {
			continue
		}
		n := byName[in.Node]
		if n == nil {
			// A cluster of the same name in another project: not ours to
			// count or shut down.
			s.Instances[i].Cluster = cl.Name + " (another project's)"
			continue
		}
		onHost[n.ID] = true
		// A failed node on a host that takes nodes is the restart
		// supervisor's to recover (or to leave, as its limits say), not
		// the global mode's to replace; on a paused host it is shut down.
		if in.State == placement.InstanceFailed && open[in.Host] {
			s.Instances[i].State = placement.InstanceStarting
		}
	}
	d, err := placement.Decide(s)
	if err != nil {
		return fmt.Errorf("the global placement of cluster '%s': %w", cl.Name, err)
	}
	in := model.ClusterGlobalSyncInputs{Create: d.Global.Create, Reasons: map[string]string{}}
	for _, n := range nodes {
		// One node per host: a node that is on no host (made before the
		// cluster became global, or before any host was recorded) is not
		// one of them.
		if !onHost[n.ID] && n.Status != model.NodeInit && n.Status != model.NodeCreating {
			in.Shutdown = append(in.Shutdown, n.ID)
			in.Reasons[n.ID] = fmt.Sprintf("Node %s is shut down, not replaced: it runs on no host, and a global cluster runs one node on each eligible host.", n.Name)
		}
	}
	for _, v := range d.Global.Shutdown {
		n := byName[v.Node]
		if n == nil || slices.Contains(in.Shutdown, n.ID) {
			continue
		}
		in.Shutdown = append(in.Shutdown, n.ID)
		in.Reasons[n.ID] = fmt.Sprintf("Node %s on host %s is shut down, not replaced: %s.", n.Name, v.Host, v.Reason)
	}
	if len(in.Create) == 0 && len(in.Shutdown) == 0 {
		if cl.DesiredCapacity != len(nodes) {
			return e.settle(ctx, cl.ID, model.ClusterGlobalSyncAction, followHosts, nil)
		}
		return nil
	}
	a, err := e.newAction(Caller{User: cl.User, Project: cl.Project}, model.ClusterGlobalSyncAction, cl.ID, cl.ID, in, 0)
	if err != nil {
		return err
	}
	a.Cause = "Global Orchestrator"
	if err := e.submit(ctx, a, false, "", nil); err != nil {
		return err
	}
	e.log.Info("global cluster follows its hosts", "cluster", cl.Name, "create_on", in.Create, "shutdown", len(in.Shutdown), "action", a.ID)
	return nil
}

// followHosts sets a global cluster's desired capacity to its node count:
// one per eligible host once the sync is done.
func followHosts(cl *model.Cluster, count int) {
	cl.DesiredCapacity = count
	if cl.MinSize > count {
		cl.MinSize = count
	}
}

// doGlobalSync is CLUSTER_GLOBAL_SYNC: a new node on each host the
// decision named (placed there through data.placement.host) and the
// deletion of each node it shut down, at once; the desired capacity then
// follows the nodes left.
func (e *Engine) doGlobalSync(ctx context.Context, a *model.Action) error {
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	in, err := inputsOf[model.ClusterGlobalSyncInputs](a)
	if err != nil {
		return err
	}
	if len(in.Shutdown) > 0 && !stageDone(a, "global.mark") {
		// Each shut-down node says why before it goes.
		nodes, err := e.store.ClusterNodes(ctx, cl.ID)
		if err != nil {
			return err
		}
		now := e.cfg.Now()
		var events []*model.Event
		for _, n := range nodes {
			if why := in.Reasons[n.ID]; why != "" {
				events = append(events, &model.Event{ID: e.rowID(), Timestamp: now, OID: n.ID, OName: n.Name, OType: "NODE", ClusterID: cl.ID,
					User: cl.User, Project: cl.Project, Action: model.ClusterGlobalSyncAction, Status: n.Status, StatusReason: why, Level: model.LevelInfo})
			}
		}
		if err := e.runStage(ctx, a, "global.mark", func(tx store.Store) error { return tx.CreateEvents(ctx, events) }); err != nil {
			return err
		}
	}
	err = e.runStage(ctx, a, "global.sync", func(tx store.Store) error {
		places := make([]map[string]any, len(in.Create))
		for i, h := range in.Create {
			places[i] = map[string]any{"host": h}
		}
		a.Data[model.DataPlacement] = model.PlacementData{Placements: places}
		if _, err := e.forkCreateWith(ctx, tx, a, cl.ID, "", len(in.Create)); err != nil {
			return err
		}
		return e.forkEach(ctx, tx, a, model.NodeDeleteAction, in.Shutdown, model.NodeDeleteInputs{})
	})
	if err != nil {
		return err
	}
	werr := e.waitChildren(ctx, a)
	if err := e.settle(ctx, cl.ID, a.Action, followHosts, werr); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	var parts []string
	if len(in.Create) > 0 {
		parts = append(parts, fmt.Sprintf("created a node on %s", strings.Join(in.Create, ", ")))
	}
	if len(in.Shutdown) > 0 {
		parts = append(parts, fmt.Sprintf("shut down %d nodes whose hosts are not eligible", len(in.Shutdown)))
	}
	if monitored(cl) {
		return e.end(ctx, a, cl.ID, "Instance monitor: "+strings.Replace(strings.Join(parts, "; "), "whose hosts are not eligible", "on its host", 1)+".")
	}
	return e.end(ctx, a, cl.ID, "Global cluster follows its hosts: "+strings.Join(parts, "; ")+".")
}

// restartableInPlace keeps the dead nodes of a global cluster that the
// restart supervisor may recover: those on a host that is up and active.
// On a paused, draining or down host a failed node is shut down by the
// global sync, not restarted (§B.4).
func (e *Engine) restartableInPlace(ctx context.Context, dead []*model.Node) ([]*model.Node, error) {
	if len(dead) == 0 {
		return dead, nil
	}
	hosts, err := e.store.ListHosts(ctx)
	if err != nil {
		return nil, err
	}
	byName := make(map[string]*model.Host, len(hosts))
	for _, h := range hosts {
		byName[h.Name] = h
	}
	var out []*model.Node
	for _, n := range dead {
		host := n.Host
		if host == "" {
			host = placedOn(n.Data)
		}
		if h := byName[host]; h != nil && !h.Schedulable() {
			continue
		}
		out = append(out, n)
	}
	return out, nil
}
