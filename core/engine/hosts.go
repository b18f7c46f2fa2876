package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// hostLocal says whether a profile type's nodes run on the machine of the
// agent that creates them, so that only that agent may create, check,
// recover and delete them. Other drivers reach their nodes from anywhere.
func hostLocal(typ string) bool { return typ == "local.process" }

// isHost says whether this engine is a host: an agent with a host_name.
func (e *Engine) isHost() bool { return e.cfg.HostName != "" }

// heartbeat records this agent's host: its labels, its load average and
// that it is up.
func (e *Engine) heartbeat(ctx context.Context) error {
	h := &model.Host{Name: e.cfg.HostName, Kind: model.HostAgent, Driver: strings.Join(e.localTypes(), ","),
		Labels: e.cfg.HostLabels, Load: loadAverage(), State: model.HostUp, Heartbeat: e.cfg.Now().Truncate(time.Microsecond)}
	if err := e.store.ReportHost(ctx, h); err != nil {
		return err
	}
	e.beatMu.Lock()
	e.lastBeat = h.Heartbeat
	e.beatMu.Unlock()
	return nil
}

// enterMaintenance puts this agent's host in maintenance when it stops
// cleanly, unless another agent heartbeated the same host name since its
// own last heartbeat (two agents configured as one host): that host is
// still up.
func (e *Engine) enterMaintenance(ctx context.Context) error {
	h, err := e.store.GetHost(ctx, e.cfg.HostName)
	if err != nil {
		return err
	}
	e.beatMu.Lock()
	last := e.lastBeat
	e.beatMu.Unlock()
	if h.Heartbeat.After(last) {
		return nil
	}
	return e.store.SetHostState(ctx, e.cfg.HostName, model.HostMaintenance, e.cfg.Now())
}

// localTypes lists the host-local profile types this agent's plugins serve.
func (e *Engine) localTypes() []string {
	var out []string
	for _, c := range e.plugins.Components("profile") {
		if hostLocal(c.Type) {
			out = append(out, c.Type)
		}
	}
	slices.Sort(out)
	return out
}

// loadAverage reads the 1, 5 and 15 minute load averages; a system
// without /proc/loadavg reports none, which placement treats as unknown.
func loadAverage() map[string]float64 {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return nil
	}
	f := strings.Fields(string(b))
	out := map[string]float64{}
	for i, k := range []string{"load1", "load5", "load15"} {
		if i < len(f) {
			if v, err := strconv.ParseFloat(f[i], 64); err == nil {
				out[k] = v
			}
		}
	}
	return out
}

// hostLoop heartbeats this agent's host and marks down the hosts whose
// heartbeat is older than the timeout: any live agent may, and the store
// reports each such host to one of them.
func (e *Engine) hostLoop(ctx context.Context) {
	defer e.wg.Done()
	t := time.NewTicker(e.cfg.HeartbeatInterval)
	defer t.Stop()
	var seenDown downHosts
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Stop does not cut a heartbeat short. A write the client gives
		// up on may still be applied by the database after Stop has put
		// the host in maintenance: it would bring the host back up with a
		// heartbeat that then grows old, and its peers would take it for
		// down and take its clusters over. Stop waits for this loop, so
		// the write has ended before maintenance is written.
		beatCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.cfg.HostDownTimeout)
		err := e.heartbeat(beatCtx)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			e.log.Error("host heartbeat", "host", e.cfg.HostName, "error", err)
			continue
		}
		now := e.cfg.Now()
		down, err := e.store.MarkHostsDown(ctx, now.Add(-e.cfg.HostDownTimeout), now)
		if err != nil && ctx.Err() == nil {
			e.log.Error("mark late hosts down", "error", err)
			continue
		}
		for _, name := range down {
			e.log.Warn("host is down: no heartbeat within the timeout", "host", name, "timeout", e.cfg.HostDownTimeout)
			_ = e.store.CreateEvents(ctx, []*model.Event{{ID: e.rowID(), Timestamp: now, OID: name, OName: name, OType: "HOST",
				Action: "HOST_DOWN", Status: model.HostDown, StatusReason: fmt.Sprintf("No heartbeat for %s.", e.cfg.HostDownTimeout), Level: model.LevelWarning}})
		}
		// Their nodes are moved, and their failover clusters taken over,
		// by the health round: run it now rather than at the next check
		// interval, also on the agents that did not mark the host down.
		wake := len(down) > 0
		if hosts, err := e.store.ListHosts(ctx); err == nil {
			wake = seenDown.update(hosts) || wake
		} else if ctx.Err() == nil {
			e.log.Error("list hosts", "error", err)
		}
		if wake {
			select {
			case e.healthNow <- struct{}{}:
			default:
			}
		}
	}
}

// downHosts remembers which hosts were down at an agent's last look.
type downHosts struct {
	seen  map[string]bool
	known bool // a first look was taken
}

// update records the hosts down now and says whether one of them was not
// down at the last look. The first look only records: a host down before
// this agent started is its first health round's business.
func (d *downHosts) update(hosts []*model.Host) bool {
	now := map[string]bool{}
	fresh := false
	for _, h := range hosts {
		if h.State == model.HostDown {
			now[h.Name] = true
			fresh = fresh || !d.seen[h.Name]
		}
	}
	fresh = fresh && d.known
	d.seen, d.known = now, true
	return fresh
}

// Hosts lists every host.
func (e *Engine) Hosts(ctx context.Context) ([]*model.Host, error) { return e.store.ListHosts(ctx) }

// Host returns one host by name.
func (e *Engine) Host(ctx context.Context, name string) (*model.Host, error) {
	if err := model.ValidHostName("name", name); err != nil {
		return nil, BadRequest("%s.", err.Error())
	}
	return e.store.GetHost(ctx, name)
}

// HostUpdate is what an operator may change on a host; nil leaves a field
// as it is.
type HostUpdate struct {
	// Availability is active, pause or drain.
	Availability *string `json:"availability,omitempty"`
	// Labels replace the operator's labels; they win over reported ones.
	Labels *map[string]string `json:"labels,omitempty"`
}

// UpdateHost sets a host's availability or operator labels.
func (e *Engine) UpdateHost(ctx context.Context, name string, u HostUpdate) (*model.Host, error) {
	if u.Availability == nil && u.Labels == nil {
		return nil, BadRequest("Nothing to update: give availability (%s) or labels.", strings.Join(model.HostAvailabilities(), ", "))
	}
	if u.Availability != nil && !slices.Contains(model.HostAvailabilities(), *u.Availability) {
		return nil, BadRequest("availability %q is not valid: it must be one of %s.", *u.Availability, strings.Join(model.HostAvailabilities(), ", "))
	}
	if u.Labels != nil {
		if err := model.ValidHostLabels("labels", *u.Labels); err != nil {
			return nil, BadRequest("%s.", err.Error())
		}
	}
	h, err := e.Host(ctx, name)
	if err != nil {
		return nil, err
	}
	if u.Availability != nil {
		h.Availability = *u.Availability
	}
	if u.Labels != nil {
		h.OperatorLabels = maps.Clone(*u.Labels)
	}
	now := e.cfg.Now()
	h.UpdatedAt = &now
	if err := e.store.UpdateHost(ctx, h); err != nil {
		return nil, err
	}
	if u.Availability != nil || u.Labels != nil {
		// Drained nodes move, and a global cluster follows any change.
		select {
		case e.healthNow <- struct{}{}:
		default:
		}
	}
	return h, nil
}

// placeOnHosts gives each new node of a host-local type its host: the
// host its data.placement names when that host takes new nodes, otherwise
// the up and active agent host with the fewest nodes (ties by name). With
// no agent host recorded at all (a single agent without host_name), nodes
// get none and any agent runs them, as before hosts existed.
func (e *Engine) placeOnHosts(ctx context.Context, tx store.Store, nodes []*model.Node) error {
	hosts, err := tx.ListHosts(ctx)
	if err != nil {
		return err
	}
	var agents, open []*model.Host
	for _, h := range hosts {
		if h.Kind != model.HostAgent {
			continue
		}
		agents = append(agents, h)
		if h.Schedulable() {
			open = append(open, h)
		}
	}
	if len(agents) == 0 {
		return nil
	}
	if len(open) == 0 {
		return Conflict("NoHost", "No host can take a new node: every agent host is down, in maintenance, paused or draining.")
	}
	counts, err := tx.HostNodeCounts(ctx)
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if n.Host != "" {
			continue
		}
		if want := placementHost(n); want != "" && slices.ContainsFunc(open, func(h *model.Host) bool { return h.Name == want }) {
			n.Host = want
		} else {
			best := open[0]
			for _, h := range open[1:] {
				if counts[h.Name] < counts[best.Name] {
					best = h
				}
			}
			n.Host = best.Name
		}
		counts[n.Host]++
		// In the data too, where policies and drivers read a node's host.
		if n.Data == nil {
			n.Data = map[string]any{}
		}
		n.Data["host"] = n.Host
	}
	return nil
}

// placementHost is the host a placement policy named in the node's data
// (data.placement.host), if any.
func placementHost(n *model.Node) string {
	p, _ := n.Data["placement"].(map[string]any)
	h, _ := p["host"].(string)
	return h
}

// checkable keeps the nodes of a group this engine checks: a host-local
// node only on its own host (another host's agent checks it, and a down
// host's nodes are moved instead), and, when all is set (this engine holds
// the cluster's health claim), every other node.
func (e *Engine) checkable(group []*model.Node, typ string, all bool) []*model.Node {
	var out []*model.Node
	for _, n := range group {
		if e.checksHere(n.Host, typ, all) {
			out = append(out, n)
		}
	}
	return out
}

// checksHere says whether this engine checks a node of a profile type on
// host (see checkable).
func (e *Engine) checksHere(host, typ string, all bool) bool {
	if hostLocal(typ) && host != "" {
		return host == e.cfg.HostName
	}
	return all
}

// moveOffHosts moves a cluster's host-local nodes off hosts that are down,
// gone or draining: one CLUSTER_MOVE_NODES action creates their
// replacements on hosts that take nodes, then deletes them, so the cluster
// never drops below its size. Nodes of a down host are marked ERROR first;
// their deletion forgets them without a driver call. It runs on the agent
// holding the cluster's health claim, for a cluster with no action.
func (e *Engine) moveOffHosts(ctx context.Context, cl *model.Cluster, hosts map[string]*model.Host) error {
	// Only nodes on a host can be moved: a cluster of other nodes costs
	// its round no read of them.
	nodes, err := e.store.ClusterHostNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	types := map[string]string{}
	var lost, drained []*model.Node
	for _, n := range nodes {
		if n.Host == "" {
			continue
		}
		typ, ok := types[n.ProfileID]
		if !ok {
			if p, err := e.store.GetProfile(ctx, n.ProfileID); err == nil {
				typ = p.Type
			}
			types[n.ProfileID] = typ
		}
		if !hostLocal(typ) {
			continue
		}
		switch moveReason(hosts[n.Host]) {
		case moveLost:
			lost = append(lost, n)
		case moveDrained:
			drained = append(drained, n)
		}
	}
	if len(lost) == 0 && len(drained) == 0 {
		return nil
	}
	open := false
	for _, h := range hosts {
		open = open || (h.Kind == model.HostAgent && h.Schedulable())
	}
	if !open {
		e.log.Warn("nodes wait for a host to move to", "cluster", cl.Name, "nodes", len(lost)+len(drained))
		return nil
	}
	now := e.cfg.Now()
	var marked []*model.Node
	var events []*model.Event
	for _, n := range lost {
		reason := fmt.Sprintf("Host %s is down; the node is recreated on another host.", n.Host)
		if n.StatusReason == reason {
			continue
		}
		n.Status, n.StatusReason, n.UpdatedAt = model.NodeError, reason, &now
		marked = append(marked, n)
		events = append(events, &model.Event{ID: e.rowID(), Timestamp: now, OID: n.ID, OName: n.Name, OType: "NODE", ClusterID: cl.ID,
			User: cl.User, Project: cl.Project, Action: "HOST_DOWN", Status: n.Status, StatusReason: reason, Level: model.LevelWarning})
	}
	if len(marked) > 0 {
		if err := e.store.UpdateNodes(ctx, marked); err != nil {
			return err
		}
		if err := e.store.CreateEvents(ctx, events); err != nil {
			return err
		}
	}
	move := lost
	reason := moveLost
	// A down host's nodes were written off above (marked ERROR): they
	// move even if it comes back meanwhile.
	var recheck func(tx store.Store) error
	if len(move) == 0 {
		move, reason = drained, moveDrained
		// hosts and the nodes were read before this round's checks, and
		// the cluster was idle then: since, the host may have been
		// undrained and an action may have placed new nodes on it and
		// ended. The move is stored only if, in its own transaction
		// (after the check that no action runs on the cluster), each
		// node is still on its host and that host still drains.
		recheck = func(tx store.Store) error { return stillDrained(ctx, tx, move) }
	}
	in := model.ClusterMoveNodesInputs{Nodes: nodeIDs(move), Reason: reason}
	a, err := e.newAction(Caller{User: cl.User, Project: cl.Project}, model.ClusterMoveNodesAction, cl.ID, cl.ID, in, 0)
	if err != nil {
		return err
	}
	a.Cause = "Host Supervisor"
	if err := e.submit(ctx, a, false, "", recheck); err != nil {
		if errors.Is(err, errMoveStale) {
			e.log.Debug("nodes not moved: their host no longer drains", "cluster", cl.Name, "why", err)
			return nil
		}
		return err
	}
	e.log.Info("moving nodes off their hosts", "cluster", cl.Name, "nodes", len(move), "why", reason, "action", a.ID)
	return nil
}

// Why a host-local node moves off its host (CLUSTER_MOVE_NODES's reason).
const (
	moveLost    = "host down"
	moveDrained = "host draining"
)

// moveReason says why a host-local node on host h moves: moveLost when
// the host is down or gone, moveDrained when it is up and draining, ""
// when the node stays.
func moveReason(h *model.Host) string {
	switch {
	case h == nil || h.State == model.HostDown:
		return moveLost
	case h.Availability == model.HostDrain && h.State == model.HostUp:
		return moveDrained
	}
	return ""
}

// errMoveStale says a move decided on an earlier read no longer holds.
var errMoveStale = errors.New("the nodes to move or their hosts changed since they were read")

// stillDrained checks, in tx, that every node is still on the host it was
// read on and that this host still drains.
func stillDrained(ctx context.Context, tx store.Store, nodes []*model.Node) error {
	fresh, err := tx.GetNodes(ctx, nodeIDs(nodes))
	if err != nil {
		return err
	}
	where := make(map[string]string, len(fresh))
	for _, n := range fresh {
		where[n.ID] = n.Host
	}
	hosts, err := tx.ListHosts(ctx)
	if err != nil {
		return err
	}
	byName := make(map[string]*model.Host, len(hosts))
	for _, h := range hosts {
		byName[h.Name] = h
	}
	for _, n := range nodes {
		host, ok := where[n.ID]
		if !ok || host != n.Host {
			return fmt.Errorf("%w: node %s left host %s", errMoveStale, n.Name, n.Host)
		}
		if moveReason(byName[host]) != moveDrained {
			return fmt.Errorf("%w: host %s of node %s no longer drains", errMoveStale, host, n.Name)
		}
	}
	return nil
}

// doMoveNodes is CLUSTER_MOVE_NODES: start-first, the replacements are
// created (placed on hosts that take nodes) before the moved nodes are
// deleted; as many are deleted as replacements came up.
func (e *Engine) doMoveNodes(ctx context.Context, a *model.Action) error {
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	in, err := inputsOf[model.ClusterMoveNodesInputs](a)
	if err != nil {
		return err
	}
	fresh, _, err := dataOf[[]string](a, "move.new")
	if err != nil {
		return err
	}
	err = e.runStage(ctx, a, "move.create", func(tx store.Store) error {
		ids, err := e.forkCreateWith(ctx, tx, a, cl.ID, "", len(in.Nodes))
		fresh = ids
		a.Data["move.new"] = ids
		return err
	})
	if err != nil {
		return err
	}
	_ = e.waitChildren(ctx, a) // failed replacements are counted below
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if !stageDone(a, "move.remove") {
		failed, err := e.failedChildren(ctx, a.ID, func(k *model.Action) bool { return slices.Contains(fresh, k.Target) })
		if err != nil {
			return err
		}
		ok := len(fresh) - len(failed)
		remove := append(append([]string{}, in.Nodes[:ok]...), failed...)
		if err := e.runStage(ctx, a, "move.remove", func(tx store.Store) error {
			return e.forkEach(ctx, tx, a, model.NodeDeleteAction, remove, model.NodeDeleteInputs{})
		}); err != nil {
			return err
		}
	}
	werr := e.waitChildren(ctx, a)
	if err := e.settle(ctx, cl.ID, a.Action, nil, werr); err != nil {
		return err
	}
	if werr != nil {
		return werr
	}
	return e.end(ctx, a, cl.ID, fmt.Sprintf("Moved %d nodes (%s).", len(in.Nodes), in.Reason))
}

// offHost takes out of a batch the nodes whose host is not this agent's:
// the store hands another host's node action over only when that host is
// down or gone, so nothing here can reach their processes. A deletion
// forgets the node (its row goes, no driver call); any other action fails
// with the reason. It returns the nodes left to run and records the
// others' outcomes in out.
func (e *Engine) offHost(ctx context.Context, action string, nodes []*model.Node, out map[string]error) ([]*model.Node, error) {
	var kept []*model.Node
	var gone []string
	for _, n := range nodes {
		switch {
		case n.Host == "" || n.Host == e.cfg.HostName:
			kept = append(kept, n)
		case action == model.NodeDeleteAction:
			gone = append(gone, n.ID)
			out[n.ID] = nil
		default:
			out[n.ID] = fmt.Errorf("Host %s of node %s is down; its %s cannot run until the node is moved or the host is back.", n.Host, n.Name, action)
		}
	}
	if len(gone) > 0 {
		if err := e.store.DeleteNodes(ctx, gone); err != nil {
			return nil, err
		}
	}
	return kept, nil
}

// HostNodeCounts counts the nodes on each host.
func (e *Engine) HostNodeCounts(ctx context.Context) (map[string]int, error) {
	return e.store.HostNodeCounts(ctx)
}

// driverHostKind is the kind of host a profile type's driver reports.
func driverHostKind(typ string) string {
	switch typ {
	case "container.docker":
		return model.HostContainerEngine
	case "vsphere.vm":
		return model.HostESXi
	case "os.nova.server":
		return model.HostHypervisor
	}
	return typ
}

// RecordDriverHosts records the hosts a profile type's driver reported
// through its Hosts hook: each report is a heartbeat; a host the driver
// could not ask is down. A name an agent host already has is left to the
// agent.
func (e *Engine) RecordDriverHosts(ctx context.Context, typ string, hosts []sdk.Host) error {
	known, err := e.store.ListHosts(ctx)
	if err != nil {
		return err
	}
	agents := map[string]bool{}
	for _, h := range known {
		agents[h.Name] = h.Kind == model.HostAgent
	}
	now := e.cfg.Now()
	for _, dh := range hosts {
		if agents[dh.Name] || model.ValidHostName("name", dh.Name) != nil {
			continue
		}
		state := model.HostUp
		if dh.Err != "" {
			state = model.HostDown
		}
		labels, dropped := hostLabels(dh.Attributes)
		if len(dropped) > 0 {
			e.log.Warn("host attributes a driver reported were left out: they break the label rules", "type", typ, "host", dh.Name, "attributes", dropped)
		}
		h := &model.Host{Name: dh.Name, Kind: driverHostKind(typ), Driver: typ, Labels: labels, Load: dh.Load, State: state, Heartbeat: now}
		if err := e.store.ReportHost(ctx, h); err != nil {
			return err
		}
	}
	return nil
}

// hostLabels keeps the attributes a driver reported for a host that are
// valid labels (model.ValidHostLabels), the first MaxHostLabels of them
// by key, and names the rest. A driver's attributes are its plugin's
// output: a key or value an operator could not have set (a control
// character, invalid UTF-8, a 10,000-character value), or more of them
// than any host carries, would reach every placement and listing.
func hostLabels(attrs map[string]string) (map[string]string, []string) {
	var kept map[string]string
	var dropped []string
	for _, k := range slices.Sorted(maps.Keys(attrs)) {
		v := attrs[k]
		if len(kept) >= model.MaxHostLabels || !utf8.ValidString(k) || !utf8.ValidString(v) || model.ValidHostLabels("", map[string]string{k: v}) != nil {
			dropped = append(dropped, strconv.Quote(k))
			continue
		}
		if kept == nil {
			kept = map[string]string{}
		}
		kept[k] = v
	}
	return kept, dropped
}
