package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/monitor"
	"github.com/grovehq/grove/core/store"
)

// instanceCommandActions maps the operator's monitor commands to their
// actions.
var instanceCommandActions = map[string]string{
	"freeze": model.ClusterFreezeAction,
	"thaw":   model.ClusterThawAction,
	"clear":  model.ClusterClearAction,
}

// instanceCommandOf is the monitor command an action runs.
func instanceCommandOf(action string) string {
	for cmd, a := range instanceCommandActions {
		if a == action {
			return cmd
		}
	}
	return ""
}

// putInstanceTries bounds the read-apply-write rounds a command makes on
// one instance before it gives up: each lost round means another writer
// (the monitor round) changed the row in between.
const putInstanceTries = 5

// failoverTopology is a cluster's grove.failover topology; empty when it
// has none.
func failoverTopology(cl *model.Cluster) string {
	f, _ := cl.Config[api.ConfigFailover].(map[string]any)
	t, _ := f["topology"].(string)
	return t
}

// instanceCommandInputs checks a freeze, thaw or clear request: the
// cluster must be a failover or flex one, and a host named must be one
// the command can act on.
func (e *Engine) instanceCommandInputs(ctx context.Context, cl *model.Cluster, name string, p map[string]any) (string, *model.InstanceCommandInputs, error) {
	if t := failoverTopology(cl); t != "failover" && t != "flex" {
		if t == "" {
			t = "none"
		}
		return "", nil, BadRequest("%s is only for a cluster whose grove.failover topology is failover or flex; the cluster '%s' has topology %s.", name, cl.Name, t)
	}
	for k := range p {
		if k != "host" {
			return "", nil, BadRequest("%s.%s is not a parameter of %s; use host.", name, k, name)
		}
	}
	in := &model.InstanceCommandInputs{}
	if v, ok := p["host"]; ok && v != nil {
		h, isStr := v.(string)
		if !isStr || h == "" {
			return "", nil, BadRequest("%s.host must be a host name.", name)
		}
		hosts, err := e.instanceHosts(ctx, cl, name)
		if err != nil {
			return "", nil, err
		}
		if !slices.Contains(hosts, h) {
			if name == "clear" {
				return "", nil, BadRequest("%s.host: the cluster '%s' has no instance on host '%s'.", name, cl.Name, h)
			}
			what := "an agent host"
			if remote, err := e.monitorRemote(ctx, cl); err == nil && remote {
				what = "a host of the cluster's driver"
			}
			return "", nil, BadRequest("%s.host: '%s' is neither %s nor a host with an instance of the cluster '%s'.", name, h, what, cl.Name)
		}
		in.Host = h
	}
	return instanceCommandActions[name], in, nil
}

// instanceHosts are the hosts a command without a host acts on: for
// freeze and thaw every host that may become a candidate (the agent hosts
// for a host-local profile, the hosts its driver reports otherwise)
// and every host with an instance; for clear the hosts with an instance.
func (e *Engine) instanceHosts(ctx context.Context, cl *model.Cluster, cmd string) ([]string, error) {
	xs, err := e.store.ListInstances(ctx, cl.ID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, x := range xs {
		out = append(out, x.Host)
	}
	if cmd != "clear" {
		remote, err := e.monitorRemote(ctx, cl)
		if err != nil {
			return nil, err
		}
		var names []string
		if remote {
			// The hosts its driver reports now.
			snap, err := e.placementSnapshot(ctx, cl)
			if err != nil {
				return nil, err
			}
			for _, h := range snap.Hosts {
				names = append(names, h.Name)
			}
		} else {
			hosts, err := e.store.ListHosts(ctx)
			if err != nil {
				return nil, err
			}
			for _, h := range hosts {
				if h.Kind == model.HostAgent {
					names = append(names, h.Name)
				}
			}
		}
		for _, n := range names {
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// doInstanceCommand runs CLUSTER_FREEZE, CLUSTER_THAW or CLUSTER_CLEAR: it
// applies the monitor's Command to each host's instance and writes it. It
// takes no cluster lock: the instances are versioned rows, so a command
// and the monitor round that share one re-read and retry rather than wait
// for each other, and a freeze is never held up by a long action. A
// freeze of every instance also cancels a pending expectation (cancelExpect).
func (e *Engine) doInstanceCommand(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.InstanceCommandInputs](a)
	if err != nil {
		return err
	}
	cmd := instanceCommandOf(a.Action)
	cl, err := e.store.GetCluster(ctx, a.ClusterID)
	if err != nil {
		return err
	}
	hosts := []string{in.Host}
	if in.Host == "" {
		if hosts, err = e.instanceHosts(ctx, cl, cmd); err != nil {
			return err
		}
	}
	var changed []string
	var refused []string
	for _, h := range hosts {
		did, err := e.commandInstance(ctx, a, cl, h, cmd)
		var re *refusal
		switch {
		case errors.As(err, &re):
			refused = append(refused, re.Error())
			continue
		case err != nil:
			return err
		}
		if did {
			changed = append(changed, h)
		}
	}
	if len(refused) > 0 {
		return errors.New(strings.Join(refused, " "))
	}
	var cancelled string
	if cmd == "freeze" && in.Host == "" {
		if cancelled, err = e.cancelExpect(ctx, a, cl); err != nil {
			return err
		}
	}
	if len(changed) == 0 {
		a.StatusReason = fmt.Sprintf("No instance of the cluster needed a %s.", cmd)
	} else {
		a.StatusReason = fmt.Sprintf("The %s of the instances on %s is done.", cmd, strings.Join(changed, ", "))
	}
	if cancelled != "" {
		a.StatusReason += fmt.Sprintf(" The pending %s of the cluster is cancelled.", cancelled)
	}
	return nil
}

// cancelExpect clears the cluster's pending expectation, if any, after a
// freeze of every instance, and returns the kind it cleared. In OpenSVC a
// freeze of the whole service is itself an admin orchestration (a global
// expect of frozen) and replaces a pending one, as a new expectation
// replaces a pending one here (doExpect): an operator who freezes the
// cluster wants nothing started, stopped or moved, and without this a
// pending switch or giveback went on stopping frozen instances. A freeze
// of one host leaves the expectation to the other hosts.
func (e *Engine) cancelExpect(ctx context.Context, a *model.Action, cl *model.Cluster) (string, error) {
	var kind, setBy string
	wrote, err := e.changeExpect(ctx, cl.ID, func(x *model.Expectation, now time.Time) bool {
		kind, setBy = x.Kind, x.ActionID
		if kind == "" {
			return false // none pending
		}
		endExpect(x, now, "cancelled: the cluster was frozen by action "+a.ID)
		return true
	})
	if err != nil || !wrote {
		return "", err
	}
	e.expectEvent(ctx, a.User, a.Project, expectActions[kind], setBy, cl, "EXPECT_CANCELLED",
		fmt.Sprintf("The pending %s of the cluster is cancelled: the cluster was frozen.", kind), model.LevelWarning, "")
	return kind, nil
}

// refusal is the monitor's refusal of a command on one instance; the
// action goes on with the other hosts and fails with it at the end.
type refusal struct{ err error }

func (r *refusal) Error() string { return capitalize(r.err.Error()) + "." }

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// commandInstance applies one command to one host's instance, re-reading
// and re-applying when another writer changed the row in between. It
// says whether it wrote anything.
func (e *Engine) commandInstance(ctx context.Context, a *model.Action, cl *model.Cluster, host, cmd string) (bool, error) {
	for try := 1; ; try++ {
		xs, err := e.store.ListInstances(ctx, cl.ID)
		if err != nil {
			return false, err
		}
		var x *model.Instance
		for _, r := range xs {
			if r.Host == host {
				x = r
			}
		}
		if x == nil {
			if cmd != "freeze" {
				// Nothing to thaw or clear: a host without an instance
				// is neither frozen nor blocked.
				return false, nil
			}
			x = &model.Instance{ClusterID: cl.ID, Host: host, State: monitor.Idle, Since: e.cfg.Now()}
		}
		step, err := monitor.Command(monitor.Instance{Host: host, State: x.State, Since: x.Since, Frozen: x.Frozen, Outcome: x.Outcome}, cmd)
		if err != nil {
			e.instanceEvent(ctx, a, cl, host, "REFUSED", capitalize(err.Error())+".", model.LevelWarning)
			return false, &refusal{err}
		}
		if step.Action == monitor.ActionNone && !step.ResetRestarts {
			e.instanceEvent(ctx, a, cl, host, "UNCHANGED", fmt.Sprintf("The instance on %s is %s.", host, step.Reason), model.LevelInfo)
			return false, nil
		}
		applyCommand(x, cmd, step, e.cfg.Now())
		err = e.store.PutInstance(ctx, x)
		switch {
		case errors.Is(err, store.ErrConflict) && try < putInstanceTries:
			continue
		case err != nil:
			return false, err
		}
		status := map[string]string{"freeze": "FROZEN", "thaw": "THAWED", "clear": "CLEARED"}[cmd]
		e.instanceEvent(ctx, a, cl, host, status, fmt.Sprintf("The instance on %s is %s: %s.", host, strings.ToLower(status), step.Reason), model.LevelInfo)
		return true, nil
	}
}

// applyCommand writes a command's step into an instance. Freeze and thaw
// are done once the flag is written, so the state is left as it is (the
// monitor round reads the flag); clear puts the instance back to idle with
// its restarts counted from zero.
func applyCommand(x *model.Instance, cmd string, step monitor.Step, now time.Time) {
	switch cmd {
	case "freeze":
		x.Frozen = true
	case "thaw":
		x.Frozen = false
	case "clear":
		if x.State != monitor.Idle {
			x.Since = now
		}
		x.State, x.Outcome, x.Restarts = monitor.Idle, monitor.Running, 0
	}
	x.Reason = step.Reason
	x.UpdatedAt = now
}

// instanceEvent records what a command did to one host's instance.
func (e *Engine) instanceEvent(ctx context.Context, a *model.Action, cl *model.Cluster, host, status, reason string, level int) {
	ev := &model.Event{ID: e.rowID(), Timestamp: e.cfg.Now(), OID: cl.ID, OName: cl.Name, OType: "CLUSTER", ClusterID: cl.ID, User: a.User,
		Project: a.Project, Action: a.Action, Status: status, StatusReason: reason, Level: level, MetaData: map[string]any{"action": a.ID, "host": host}}
	ctx, cancel := detached(ctx)
	defer cancel()
	if err := e.store.CreateEvents(ctx, []*model.Event{ev}); err != nil {
		e.actionLog(a).Error("record event", "error", err)
	}
}
