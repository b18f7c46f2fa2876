package engine

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/monitor"
	"github.com/grovehq/grove/core/store"
)

// expectActions maps the operator's expectation commands to their
// actions. start and stop reach them only for a cluster the instance
// monitors run; elsewhere they are the run lifecycle's CLUSTER_START and
// CLUSTER_STOP.
var expectActions = map[string]string{
	monitor.ExpectStart:    model.ClusterExpectStartAction,
	monitor.ExpectStop:     model.ClusterExpectStopAction,
	monitor.ExpectSwitch:   model.ClusterSwitchAction,
	monitor.ExpectGiveback: model.ClusterGivebackAction,
}

// expectOf is the expectation an action sets.
func expectOf(action string) string {
	for kind, a := range expectActions {
		if a == action {
			return kind
		}
	}
	return ""
}

// expectInputs checks a start, stop, switch or giveback request: the
// cluster must be a failover or flex one (switch: failover), switch names
// a host that is a surviving candidate now, the others take no parameter.
func (e *Engine) expectInputs(ctx context.Context, cl *model.Cluster, name string, p map[string]any) (string, *model.InstanceCommandInputs, error) {
	t := failoverTopology(cl)
	if t != monitor.Failover && t != monitor.Flex {
		if t == "" {
			t = "none"
		}
		return "", nil, BadRequest("%s is only for a cluster whose grove.failover topology is failover or flex; the cluster '%s' has topology %s.", name, cl.Name, t)
	}
	in := &model.InstanceCommandInputs{}
	for k, v := range p {
		if k != "host" || name != monitor.ExpectSwitch {
			if name == monitor.ExpectSwitch {
				return "", nil, BadRequest("%s.%s is not a parameter of switch; use host.", name, k)
			}
			return "", nil, BadRequest("%s.%s is not a parameter of %s; %s takes none.", name, k, name, name)
		}
		h, ok := v.(string)
		if !ok || h == "" {
			return "", nil, BadRequest("switch.host must be a host name.")
		}
		in.Host = h
	}
	if name == monitor.ExpectSwitch {
		if t != monitor.Failover {
			return "", nil, BadRequest("switch moves a failover cluster to one host; the cluster '%s' has topology %s.", cl.Name, t)
		}
		if in.Host == "" {
			return "", nil, BadRequest("switch.host is required: name the host the cluster moves to.")
		}
		if err := e.checkSwitch(ctx, cl, in.Host); err != nil {
			return "", nil, err
		}
	}
	return expectActions[name], in, nil
}

// checkSwitch refuses a switch to a host that cannot take the cluster now,
// with the monitor's reason.
func (e *Engine) checkSwitch(ctx context.Context, cl *model.Cluster, host string) error {
	hosts, err := e.hostsByName(ctx)
	if err != nil {
		return err
	}
	v, err := e.monitorInput(ctx, cl, hosts, "")
	if err != nil {
		return err
	}
	if err := monitor.SwitchTarget(v.in, host); err != nil {
		var fe *monitor.FieldError
		if errors.As(err, &fe) {
			return BadRequest("The cluster '%s' cannot be switched: %s: %s.", cl.Name, fe.Field, fe.Problem)
		}
		return err
	}
	return nil
}

// hostsByName reads every host, keyed by its name.
func (e *Engine) hostsByName(ctx context.Context) (map[string]*model.Host, error) {
	all, err := e.store.ListHosts(ctx)
	if err != nil {
		return nil, err
	}
	hosts := make(map[string]*model.Host, len(all))
	for _, h := range all {
		hosts[h.Name] = h
	}
	return hosts, nil
}

// doExpect runs CLUSTER_EXPECT_START, CLUSTER_EXPECT_STOP, CLUSTER_SWITCH
// and CLUSTER_GIVEBACK: it writes the cluster's expectation, which every
// host's monitor round honours until it is reached (or cannot be), and
// then clears. A start thaws the frozen instances first (a started
// orchestration thaws first, §A.10); a stop freezes every instance, as
// OpenSVC freezes a stopped ha service, so that nothing restarts it once
// the expectation is reached: a later start or thaw lets it run again. A
// new expectation replaces a pending one. Like freeze, it takes no
// cluster lock.
func (e *Engine) doExpect(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.InstanceCommandInputs](a)
	if err != nil {
		return err
	}
	kind := expectOf(a.Action)
	cl, err := e.store.GetCluster(ctx, a.ClusterID)
	if err != nil {
		return err
	}
	if kind == monitor.ExpectSwitch {
		// The target was checked when the action was asked for; it may
		// have failed or gone since.
		if err := e.checkSwitch(ctx, cl, in.Host); err != nil {
			return err
		}
	}
	var flag string
	switch kind {
	case monitor.ExpectStart:
		flag = "thaw"
	case monitor.ExpectStop:
		flag = "freeze"
	}
	if flag != "" {
		var hosts []string
		if flag == "thaw" {
			// Only the frozen ones: a start is no thaw command, and an
			// UNCHANGED event per host would say nothing.
			hosts, err = e.frozenHosts(ctx, cl.ID)
		} else {
			hosts, err = e.instanceHosts(ctx, cl, flag)
		}
		if err != nil {
			return err
		}
		for _, h := range hosts {
			if _, err := e.commandInstance(ctx, a, cl, h, flag); err != nil {
				return err
			}
		}
	}
	var replaced string
	_, err = e.changeExpect(ctx, cl.ID, func(x *model.Expectation, now time.Time) bool {
		replaced = x.Kind
		x.Kind, x.Host, x.Since, x.ActionID, x.Reason, x.UpdatedAt = kind, in.Host, now, a.ID, "", now
		return true
	})
	if err != nil {
		return err
	}
	what := expectPhrase(kind, in.Host)
	reason := fmt.Sprintf("The cluster is expected to %s: every host's instance monitor works toward it, then clears it.", what)
	if replaced != "" {
		reason = fmt.Sprintf("The cluster is expected to %s, in place of the pending %s: every host's instance monitor works toward it, then clears it.", what, replaced)
	}
	e.expectEvent(ctx, a.User, a.Project, a.Action, a.ID, cl, "EXPECTING", reason, model.LevelInfo, in.Host)
	a.StatusReason = reason
	return nil
}

// changeExpect applies change to the cluster's expectation (a new row
// when none was ever set) and writes it, reading it again and re-applying
// change when another writer came first, up to putInstanceTries rounds,
// as commandInstance does for instances. change is given the time of its
// round and returns false to leave the row unwritten; changeExpect
// reports whether it wrote.
func (e *Engine) changeExpect(ctx context.Context, clusterID string, change func(x *model.Expectation, now time.Time) bool) (bool, error) {
	for try := 1; ; try++ {
		x, err := e.store.GetExpectation(ctx, clusterID)
		if err != nil {
			return false, err
		}
		if x == nil {
			x = &model.Expectation{ClusterID: clusterID}
		}
		if !change(x, e.cfg.Now()) {
			return false, nil
		}
		err = e.store.PutExpectation(ctx, x)
		if errors.Is(err, store.ErrConflict) && try < putInstanceTries {
			continue
		}
		return err == nil, err
	}
}

// endExpect clears the pending expectation in x at now, result saying
// how it ended ("reached: ...", "failed: ...", "cancelled: ...").
func endExpect(x *model.Expectation, now time.Time, result string) {
	x.Kind, x.Host, x.Since, x.Reason, x.UpdatedAt = "", "", now, result, now
}

// frozenHosts are the hosts whose instance of the cluster is frozen.
func (e *Engine) frozenHosts(ctx context.Context, clusterID string) ([]string, error) {
	xs, err := e.store.ListInstances(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, x := range xs {
		if x.Frozen {
			out = append(out, x.Host)
		}
	}
	return out, nil
}

// expectPhrase says what an expectation asks, for events.
func expectPhrase(kind, host string) string {
	switch kind {
	case monitor.ExpectStart:
		return "start"
	case monitor.ExpectStop:
		return "stop (its instances frozen, so nothing restarts them)"
	case monitor.ExpectSwitch:
		return "move to host " + host
	case monitor.ExpectGiveback:
		return "move back to its preferred hosts"
	}
	return kind
}

// expectEvent records a step of an expectation on the cluster.
func (e *Engine) expectEvent(ctx context.Context, user, project, action, actionID string, cl *model.Cluster, status, reason string, level int, host string) {
	meta := map[string]any{"action": actionID}
	if host != "" {
		meta["host"] = host
	}
	ev := &model.Event{ID: e.rowID(), Timestamp: e.cfg.Now(), OID: cl.ID, OName: cl.Name, OType: "CLUSTER", ClusterID: cl.ID, User: user,
		Project: project, Action: action, Status: status, StatusReason: reason, Level: level, MetaData: meta}
	ctx, cancel := detached(ctx)
	defer cancel()
	if err := e.store.CreateEvents(ctx, []*model.Event{ev}); err != nil {
		e.log.Error("record event", "cluster", cl.Name, "error", err)
	}
}

// pendingExpect reads a cluster's pending expectation into the monitor's
// input; the stored row rides along so a round can clear it.
func (e *Engine) pendingExpect(ctx context.Context, v *monitorView) error {
	x, err := e.store.GetExpectation(ctx, v.clusterID)
	if err != nil {
		return err
	}
	v.expect = x
	if x != nil && x.Kind != "" {
		v.in.Expect = monitor.Expect{Kind: x.Kind, Host: x.Host}
	}
	return nil
}

// settleExpect clears the pending expectation once the monitor says it is
// reached or cannot be, with an event saying which; a clear lost to
// another writer (another host's round, a new command) is left to it. The
// decision that follows reads no expectation.
func (e *Engine) settleExpect(ctx context.Context, cl *model.Cluster, v *monitorView) {
	if v.in.Expect.Kind == "" {
		return
	}
	p, err := monitor.Progress(v.in)
	if err != nil || (p.State != monitor.ExpectReached && p.State != monitor.ExpectFailed) {
		return
	}
	x := v.expect
	kind := x.Kind
	now := e.cfg.Now()
	endExpect(x, now, p.State+": "+p.Reason)
	if err := e.store.PutExpectation(ctx, x); err != nil {
		if !errors.Is(err, store.ErrConflict) {
			e.log.Warn("clearing an expectation failed", "cluster", cl.Name, "error", err)
		}
		return
	}
	v.in.Expect = monitor.Expect{}
	action := expectActions[kind]
	if p.State == monitor.ExpectReached {
		e.expectEvent(ctx, cl.User, cl.Project, action, x.ActionID, cl, "EXPECT_REACHED", fmt.Sprintf("The %s of the cluster is done: %s.", kind, p.Reason), model.LevelInfo, "")
		return
	}
	e.expectEvent(ctx, cl.User, cl.Project, action, x.ActionID, cl, "EXPECT_FAILED", fmt.Sprintf("The %s of the cluster cannot be done and is dropped: %s.", kind, p.Reason), model.LevelWarning, "")
}

// ClusterExpectation is a failover or flex cluster's expectation: the
// pending one, or with an empty Kind the last one and how it ended (its
// Reason); nil when none was ever set.
func (e *Engine) ClusterExpectation(ctx context.Context, cl *model.Cluster) (*model.Expectation, error) {
	if t := failoverTopology(cl); t != monitor.Failover && t != monitor.Flex {
		return nil, nil
	}
	return e.store.GetExpectation(ctx, cl.ID)
}
