package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/monitor"
	"github.com/grovehq/grove/core/orchestrator/placement"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// topologyOf is a cluster's grove.failover topology; empty means
// replicated.
func topologyOf(cl *model.Cluster) string {
	f, _ := cl.Config[api.ConfigFailover].(map[string]any)
	t, _ := f["topology"].(string)
	return t
}

// monitored says whether a cluster runs an instance monitor on each host:
// its topology is failover (one instance up) or flex (flex_target
// instances up, one per host at most) (docs/failover.md).
func monitored(cl *model.Cluster) bool {
	t := topologyOf(cl)
	return t == monitor.Failover || t == monitor.Flex
}

// monitorRuns says whether the instance monitors run a cluster: a failover
// or flex cluster, whatever its profile's driver. The hosts differ: for a
// host-local profile (local.process) they are the agent hosts, each
// running its own instance's monitor; for any other they are the hosts
// its driver reports (Docker engines, hypervisors, ESXi hosts), whose
// monitors the agent holding the cluster's health claim runs, as it runs
// a global cluster's sync (remoteMonitorRound).
func (e *Engine) monitorRuns(ctx context.Context, cl *model.Cluster) (bool, error) {
	return monitored(cl), nil
}

// monitorRemote says whether a monitored cluster's hosts are its driver's
// (a profile that is not host-local), so that the agent holding its health
// claim runs every host's monitor.
func (e *Engine) monitorRemote(ctx context.Context, cl *model.Cluster) (bool, error) {
	prof, err := e.store.GetProfile(ctx, cl.ProfileID)
	if err != nil {
		return false, err
	}
	return !hostLocal(prof.Type), nil
}

// monitorHostsRefusal refuses a failover or flex setting on a profile
// whose driver is not host-local and lists no hosts (its plugin has no
// Hosts hook): such a cluster would have no host to run an instance on,
// and would otherwise sit idle with only a log line saying why. A driver
// that cannot be asked right now is not refused: each round reads its
// hosts again.
func (e *Engine) monitorHostsRefusal(ctx context.Context, cfg map[string]any, prof *model.Profile) error {
	cl := &model.Cluster{Config: cfg}
	if !monitored(cl) || hostLocal(prof.Type) {
		return nil
	}
	err := e.plugins.Call(ctx, "profile", prof.Type, func(ctx context.Context, c *sdk.Client) error {
		_, err := c.Hosts(ctx, prof.Type)
		return err
	})
	if status.Code(err) != codes.Unimplemented {
		return nil
	}
	t := topologyOf(cl)
	return BadRequest("config.grove.failover.topology: a %s cluster runs its instances on the hosts of its profile's driver, and profile type %s lists none (its driver has no Hosts hook); use a type whose driver has hosts (local.process over the agent hosts, container.docker, os.nova.server, vsphere.vm) or topology replicated.", t, prof.Type)
}

// runsMonitor is monitorRuns for the health round.
func (e *Engine) runsMonitor(ctx context.Context, cl *model.Cluster) bool {
	runs, _ := e.monitorRuns(ctx, cl)
	return runs
}

// monitorRefusal is the message a manual change of a failover or flex
// cluster's size gets: its instance monitors decide where it runs.
func monitorRefusal(cl *model.Cluster, what string) error {
	return BadRequest("The cluster '%s' is a %s cluster (grove.failover topology %s): its instance monitors start and stop its nodes, one per host at most, and its desired_capacity follows them, so %s is refused.", cl.Name, topologyOf(cl), topologyOf(cl), what)
}

// monitorSettings reads a cluster's grove.failover setting as the monitor
// does; the API validated it when it was set.
func monitorSettings(cl *model.Cluster) (monitor.Settings, error) {
	var s monitor.Settings
	raw, err := json.Marshal(cl.Config[api.ConfigFailover])
	if err == nil {
		err = json.Unmarshal(raw, &s)
	}
	if err != nil {
		return s, fmt.Errorf("the grove.failover setting of cluster '%s' cannot be read: %w", cl.Name, err)
	}
	return s, nil
}

// instanceStatus is a host's instance status from the cluster's nodes on
// that host: up when one is ACTIVE, warn when one is alive otherwise
// (being made, changed or degraded), down when there is none or only
// failed or leaving ones.
func instanceStatus(nodes []*model.Node) string {
	status := monitor.Down
	for _, n := range nodes {
		switch n.Status {
		case model.NodeActive:
			return monitor.Up
		case model.NodeError, model.NodeDeleting:
		default:
			status = monitor.Warn
		}
	}
	return status
}

// monitorView is what one monitor round read: the decision's input, the
// stored rows by host and the cluster's nodes by host.
type monitorView struct {
	in    monitor.Input
	rows  map[string]*model.Instance
	nodes map[string][]*model.Node
	// clusterID and expect are the cluster's and its stored expectation
	// (expect.go), read into in.Expect while one is pending.
	clusterID string
	expect    *model.Expectation
	// remote says the hosts are the driver's (a profile that is not
	// host-local); live are those it reports up, the ones with data.
	remote bool
	live   map[string]bool
}

// monitorInput builds the instance monitor's input for a cluster from the
// store: its settings, the placement decision over the agent hosts (the
// bound placement policy's ranking, the default one without; where the
// cluster's own instances are does not move the ranking), each host's
// instance row with its status read from the cluster's node there, and
// the hosts' maintenance and this agent's start. A peer whose host is down
// or gone has no data (no instance); the local host me always has one
// (none when me is empty: an onlooker's view).
func (e *Engine) monitorInput(ctx context.Context, cl *model.Cluster, hosts map[string]*model.Host, me string) (*monitorView, error) {
	settings, err := monitorSettings(cl)
	if err != nil {
		return nil, err
	}
	props, _, err := e.boundPlacement(ctx, cl)
	if err != nil {
		return nil, err
	}
	snap, err := e.placementSnapshot(ctx, cl)
	if err != nil {
		return nil, err
	}
	if snap.Err != "" {
		return nil, fmt.Errorf("the hosts of cluster '%s' cannot be read: %s", cl.Name, snap.Err)
	}
	s := decisionSnapshot(cl.Name, props, snap)
	s.Instances = slices.DeleteFunc(s.Instances, func(x placement.Instance) bool { return x.Cluster == cl.Name })
	s.Add = 1
	d, err := placement.Decide(s)
	if err != nil {
		return nil, fmt.Errorf("the placement of cluster '%s': %w", cl.Name, err)
	}
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return nil, err
	}
	remote, err := e.monitorRemote(ctx, cl)
	if err != nil {
		return nil, err
	}
	v := &monitorView{rows: map[string]*model.Instance{}, nodes: map[string][]*model.Node{}, clusterID: cl.ID, remote: remote}
	for _, n := range nodes {
		h := n.Host
		if h == "" {
			h = placedOn(n.Data)
		}
		v.nodes[h] = append(v.nodes[h], n)
	}
	rows, err := e.store.ListInstances(ctx, cl.ID)
	if err != nil {
		return nil, err
	}
	for _, r := range rows {
		v.rows[r.Host] = r
	}
	if me != "" && v.rows[me] == nil {
		v.rows[me] = &model.Instance{ClusterID: cl.ID, Host: me, State: monitor.Idle, Since: e.cfg.Now()}
	}
	// A driver's host has no agent of its own: its data is what the driver
	// reports now. Every host the driver reports up has an instance (idle
	// until its first round records it); one it reports down, or no
	// longer reports, has none.
	live := map[string]bool{}
	if remote {
		for _, h := range snap.Hosts {
			if h.State != model.HostUp {
				continue
			}
			live[h.Name] = true
			if v.rows[h.Name] == nil {
				v.rows[h.Name] = &model.Instance{ClusterID: cl.ID, Host: h.Name, State: monitor.Idle, Since: e.cfg.Now()}
			}
		}
	}
	v.live = live
	now := e.cfg.Now()
	v.in = monitor.Input{Settings: settings, Placement: d, Now: now}
	for _, host := range slices.Sorted(maps.Keys(v.rows)) {
		r := v.rows[host]
		h := hosts[host]
		switch {
		case remote && !live[host]:
			continue // its driver reports it down, or no longer: no data
		case !remote && host != me && (h == nil || h.State == model.HostDown):
			continue // its agent is gone: no data
		}
		if remote {
			h = nil // a driver's host is never in maintenance
		}
		x := monitor.Instance{Host: host, Status: instanceStatus(v.nodes[host]), State: r.State, Since: r.Since, Frozen: r.Frozen, Outcome: r.Outcome}
		if h != nil && h.State == model.HostMaintenance {
			x.Maintenance = h.Heartbeat
		}
		if me != "" && host == me && !remote {
			// An agent's own host waits for its rejoin grace. A driver's
			// hosts do not: the agent deciding for them reads all of them
			// from the driver's report at once.
			x.Joined = e.joined
		}
		v.in.Instances = append(v.in.Instances, x)
	}
	return v, e.pendingExpect(ctx, v)
}

// monitorRound runs this host's instance monitor for a failover or flex
// cluster whose profile is host-local, on the health round, for a cluster
// with no action (monitorStep).
func (e *Engine) monitorRound(ctx context.Context, cl *model.Cluster, hosts map[string]*model.Host) error {
	if remote, err := e.monitorRemote(ctx, cl); err != nil || remote {
		return err // a driver's hosts: the health claim's holder runs them
	}
	_, err := e.monitorStep(ctx, cl, hosts, e.cfg.HostName)
	return err
}

// remoteMonitorRound runs the instance monitor of every host of a failover
// or flex cluster whose profile is not host-local: its hosts are the ones
// its driver reports, none of them an agent, so the agent holding the
// cluster's health claim runs each host's monitor in turn, as that host
// would (monitorStep), on the health round, for a cluster with no action.
// Once one host's step started an action the others wait for the next
// round: the cluster is busy until it ends.
func (e *Engine) remoteMonitorRound(ctx context.Context, cl *model.Cluster, hosts map[string]*model.Host) error {
	v, err := e.monitorInput(ctx, cl, hosts, "")
	if err != nil {
		return err
	}
	for _, host := range slices.Sorted(maps.Keys(v.live)) {
		acted, err := e.monitorStep(ctx, cl, hosts, host)
		if err != nil || acted {
			return err
		}
	}
	return nil
}

// monitorStep runs one host's instance monitor: it resolves how the host's
// last start or stop ended, decides every host's step (every host runs
// the same decision with itself as local) and applies only the host me's:
// it records its instance's new state, starts the cluster's node on me (a
// CLUSTER_GLOBAL_SYNC creating one placed there) or deletes me's nodes.
// A write that lost to another writer is read again next round. acted
// says an action was submitted.
func (e *Engine) monitorStep(ctx context.Context, cl *model.Cluster, hosts map[string]*model.Host, me string) (acted bool, err error) {
	v, err := e.monitorInput(ctx, cl, hosts, me)
	if err != nil {
		return false, err
	}
	row := v.rows[me]
	resolved := false
	// No action runs on the cluster (the health round skips busy ones), so
	// a start or stop this host began has ended: its outcome is what the
	// node on this host shows.
	if monitor.Doing(row.State) && row.Outcome == monitor.Running && (row.State == monitor.Starting || row.State == monitor.Stopping) {
		status := instanceStatus(v.nodes[me])
		ok := status == monitor.Up
		if row.State == monitor.Stopping {
			ok = status == monitor.Down
		}
		row.Outcome, resolved = monitor.Failed, true
		if ok {
			row.Outcome = monitor.Succeeded
		}
		for i := range v.in.Instances {
			if v.in.Instances[i].Host == me {
				v.in.Instances[i].Outcome = row.Outcome
			}
		}
	}
	e.settleExpect(ctx, cl, v)
	steps, err := monitor.Decide(v.in)
	if err != nil {
		return false, fmt.Errorf("the instance monitor of cluster '%s': %w", cl.Name, err)
	}
	// A peer's maintenance grace or this host's rejoin grace that ends
	// before the next check is decided on when it ends: a takeover then
	// waits for no check interval.
	if at, ok := monitor.NextChange(v.in); ok {
		e.wakeHealthAt(at)
	}
	i := slices.IndexFunc(steps, func(s monitor.Step) bool { return s.Host == me })
	if i < 0 {
		return false, nil
	}
	step := steps[i]
	now := e.cfg.Now()
	changed := step.Next != row.State
	prevState, prevSince, prevOutcome := row.State, row.Since, row.Outcome
	if changed {
		row.State, row.Since, row.Outcome = step.Next, now, monitor.Running
	}
	if !changed && !resolved && step.Reason == row.Reason && row.Version != 0 {
		return false, e.followMonitor(ctx, cl, v)
	}
	row.Reason, row.UpdatedAt = step.Reason, now
	if err := e.store.PutInstance(ctx, row); err != nil {
		if errors.Is(err, store.ErrConflict) {
			return false, nil // another writer came first: read again next round
		}
		return false, err
	}
	if changed {
		e.log.Info("instance monitor step", "cluster", cl.Name, "host", me, "state", step.Next, "action", step.Action, "reason", step.Reason)
	}
	if changed && step.Next == monitor.Ready {
		// A round when the ready period ends starts the instance then,
		// not at the next check interval (5 s by default).
		e.wakeHealthAt(now.Add(time.Duration(*v.in.Settings.Defaults().ReadyPeriod)))
	}
	var in model.ClusterGlobalSyncInputs
	switch step.Action {
	case monitor.ActionStart:
		in.Create = []string{me}
		// A node left failed on this host goes with the start, so the
		// host keeps one node of the cluster at most.
		in.Reasons = map[string]string{}
		for _, n := range v.nodes[me] {
			in.Shutdown = append(in.Shutdown, n.ID)
			in.Reasons[n.ID] = fmt.Sprintf("Node %s on host %s is replaced by the instance monitor's start: it is %s.", n.Name, me, n.Status)
		}
		// The nodes a down or vanished host left behind go too, so the
		// cluster keeps one node per live instance. An agent host's
		// agent is gone, so their deletion only forgets them (the store
		// hands it over, offHost). A driver's node is reachable from any
		// agent (it has no nodes.host), so its deletion goes through the
		// driver: the instance really stops, and a failover cluster does
		// not end up with two up once its host answers again. A host in
		// maintenance keeps its node: it is expected back.
		for _, host := range slices.Sorted(maps.Keys(v.nodes)) {
			if host == me || host == "" {
				continue
			}
			if h := hosts[host]; (v.remote && v.live[host]) || (!v.remote && h != nil && h.State != model.HostDown) {
				continue
			}
			for _, n := range v.nodes[host] {
				in.Shutdown = append(in.Shutdown, n.ID)
				if v.remote {
					in.Reasons[n.ID] = fmt.Sprintf("Node %s is deleted: its host %s is down or no longer reported by its driver, and the instance moves to %s.", n.Name, host, me)
				} else {
					in.Reasons[n.ID] = fmt.Sprintf("Node %s is forgotten: its host %s is down and the instance moves to %s.", n.Name, host, me)
				}
			}
		}
	case monitor.ActionStop:
		in.Reasons = map[string]string{}
		for _, n := range v.nodes[me] {
			in.Shutdown = append(in.Shutdown, n.ID)
			in.Reasons[n.ID] = fmt.Sprintf("Node %s on host %s is stopped by the instance monitor: %s", n.Name, me, step.Reason)
		}
		if len(in.Shutdown) == 0 {
			return false, nil // nothing runs here: the next round finds it stopped
		}
	default:
		return false, nil
	}
	a, err := e.newAction(Caller{User: cl.User, Project: cl.Project}, model.ClusterGlobalSyncAction, cl.ID, cl.ID, in, 0)
	if err == nil {
		a.Cause = "Instance Monitor"
		err = e.submit(ctx, a, false, "", nil)
	}
	var busy *Error
	if errors.As(err, &busy) && busy.Type == "ActionConflict" {
		// Another action holds the cluster (a peer's start of a flex
		// cluster that went ready at the same time, an operator's
		// command): nothing ran and nothing failed. The instance goes back
		// to where it was, and the next round decides again, seeing the
		// peer's *ing state.
		row.State, row.Since, row.Outcome = prevState, prevSince, prevOutcome
		row.Reason = fmt.Sprintf("the %s waits: %v", step.Action, err)
		if perr := e.store.PutInstance(ctx, row); perr != nil && !errors.Is(perr, store.ErrConflict) {
			return false, perr
		}
		return false, nil
	}
	if err != nil {
		// The action never ran: the start or stop failed.
		row.Outcome, row.Reason = monitor.Failed, fmt.Sprintf("the %s could not be submitted: %v", step.Action, err)
		if perr := e.store.PutInstance(ctx, row); perr != nil && !errors.Is(perr, store.ErrConflict) {
			return false, errors.Join(err, perr)
		}
		return false, err
	}
	return true, nil
}

// followMonitor keeps a monitored cluster's desired capacity at its node
// count once its monitors are at rest. The count is the round's view's:
// nothing changed the nodes since it was read (the cluster has no action).
func (e *Engine) followMonitor(ctx context.Context, cl *model.Cluster, v *monitorView) error {
	count := 0
	for _, nodes := range v.nodes {
		count += len(nodes)
	}
	if cl.DesiredCapacity == count {
		return nil
	}
	return e.settle(ctx, cl.ID, model.ClusterGlobalSyncAction, followHosts, nil)
}

// InstanceView is one host's instance of a failover or flex cluster as
// the API shows it: <status> <monitor state> <flags>.
type InstanceView struct {
	Host   string
	Status string
	State  string
	Flags  string
	Frozen bool
	Since  time.Time
	Reason string
}

// ClusterInstances shows a failover or flex cluster's instances, one per
// host that recorded one: the status read from its node there (n/a when
// its host is down or gone), the monitor state its host recorded and the
// flags of the placement decision. Other clusters have none (nil, nil).
func (e *Engine) ClusterInstances(ctx context.Context, cl *model.Cluster) ([]InstanceView, error) {
	if !monitored(cl) {
		return nil, nil
	}
	rows, err := e.store.ListInstances(ctx, cl.ID)
	if err != nil || len(rows) == 0 {
		return nil, err
	}
	hosts, err := e.hostsByName(ctx)
	if err != nil {
		return nil, err
	}
	steps := map[string]monitor.Step{}
	v, err := e.monitorInput(ctx, cl, hosts, "")
	if err == nil {
		if ss, err := monitor.Decide(v.in); err == nil {
			for _, s := range ss {
				steps[s.Host] = s
			}
		}
	}
	grace := monitor.DefaultMaintenanceGrace
	if st, err := monitorSettings(cl); err == nil {
		grace = time.Duration(*st.Defaults().MaintenanceGracePeriod)
	}
	now := e.cfg.Now()
	out := make([]InstanceView, 0, len(rows))
	for _, r := range rows {
		x := InstanceView{Host: r.Host, Status: monitor.NA, State: cmp.Or(r.State, monitor.Idle), Frozen: r.Frozen, Since: r.Since, Reason: r.Reason}
		if s, ok := steps[r.Host]; ok {
			x.Status, x.Flags = s.Status, s.Flags
		}
		if r.Frozen && !strings.Contains(x.Flags, "F") {
			// The decision leaves out a host without data (down), but its
			// instance's own frozen flag still shows, in the seed's order.
			x.Flags = strings.TrimSuffix(x.Flags, "L") + "F" + map[bool]string{true: "L"}[strings.HasSuffix(x.Flags, "L")]
		}
		if v != nil && v.remote {
			if !v.live[r.Host] {
				x.Status = monitor.NA // its driver reports it down, or no longer
			}
		} else if h := hosts[r.Host]; h == nil || h.State == model.HostDown || (h.State == model.HostMaintenance && now.Sub(h.Heartbeat) >= grace) {
			// Its agent is gone, or in maintenance past the grace: the
			// monitors have no data of it.
			x.Status = monitor.NA
		}
		out = append(out, x)
	}
	return out, nil
}
