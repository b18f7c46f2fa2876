package deps

import (
	"fmt"
	"slices"
)

// EventKind is what happened to a cluster (or what an operator asks).
type EventKind string

// The events.
const (
	// Fault: a running cluster left running because of an error (a node
	// died: a crash, a kill, a failed health check). Level fault.
	Fault EventKind = "fault"
	// Stop: a running cluster left running without an error (an update, a
	// restart, a dependency's stop). Level restart.
	Stop EventKind = "stop"
	// RefreshEvent: a running cluster was refreshed and stays running.
	// Level refresh.
	RefreshEvent EventKind = "refresh"
	// Start: a cluster came up. Reason says why it came up (none, restart
	// or refresh), which matters to optional_all dependents (§C.3).
	Start EventKind = "start"
	// AdminStop: an operator stops a cluster; its running dependents stop
	// first, leaves first (§C.5).
	AdminStop EventKind = "admin_stop"
	// AdminStart: an operator starts a stopped cluster; it starts when its
	// dependencies allow.
	AdminStart EventKind = "admin_start"
	// Milestone: an operator enters a milestone (§C.5).
	Milestone EventKind = "milestone"
	// ReconcileEvent is no event: the stops the graph owes as it stands
	// (Reconcile), what an agent takes after a crash cut a cascade short.
	ReconcileEvent EventKind = "reconcile"
)

// Event is one event on the graph.
type Event struct {
	Kind    EventKind `json:"kind"`
	Cluster string    `json:"cluster,omitempty"`
	// Reason is a Start's reason: "", "restart" or "refresh".
	Reason RestartOn `json:"reason,omitempty"`
	// Milestone is the milestone a Milestone event enters: a name, "all"
	// or "none".
	Milestone string `json:"milestone,omitempty"`
}

// Op is what a step does to a cluster.
type Op string

// The ops.
const (
	OpStop  Op = "stop"
	OpStart Op = "start"
)

// Causes of a step.
const (
	// CauseDependency is SMF's "dependency" cause: a non-error stop, so it
	// propagates at level restart.
	CauseDependency = "dependency"
	CauseAdmin      = "admin"
	CauseMilestone  = "milestone"
)

// Step is one stop or start the decision asks for.
type Step struct {
	Cluster string `json:"cluster"`
	Op      Op     `json:"op"`
	Cause   string `json:"cause"`
	// Because is a sentence fragment: "db stopped (fault), group database
	// restart_on error".
	Because string `json:"because,omitempty"`
}

// Decision is what an event leads to.
type Decision struct {
	// Steps are in the order to carry them out: stops leaves first.
	Steps []Step `json:"steps"`
	// Recovery are the starts that follow once the event's cluster runs
	// again (after a fault or a stop), dependencies first.
	Recovery []Step `json:"recovery,omitempty"`
	// Held are clusters that stay down and why ("waiting on db:
	// maintenance"), for clusters a milestone or recovery would start.
	Held []Verdict `json:"held,omitempty"`
}

// Propagate decides what an event on a snapshot leads to (§C.3–C.5).
func Propagate(s Snapshot, ev Event) (Decision, error) {
	p := &propagation{g: newGraph(clone(s)), stopped: map[string]bool{}}
	switch ev.Kind {
	case Milestone:
		return p.milestone(ev.Milestone)
	case ReconcileEvent:
		return Reconcile(s), nil
	}
	c, ok := p.g.cluster(ev.Cluster)
	if !ok {
		return Decision{}, fmt.Errorf("Event %s: cluster %q is not in the snapshot.", ev.Kind, ev.Cluster)
	}
	name := c.Name
	switch ev.Kind {
	case Fault, Stop:
		if c.State != Running {
			return Decision{}, fmt.Errorf("Event %s: cluster %q is %s, not running.", ev.Kind, name, c.State)
		}
		level := LevelFault
		if ev.Kind == Stop {
			level = LevelRestart
		}
		c.State = Offline
		p.stop(name, level, fmt.Sprintf("%s stopped (%s)", name, level))
		p.excludedStopped(name)
		d := p.decision()
		// Recovery: the cluster runs again; what it took down comes back.
		p.set(name, Running)
		p.steps = nil
		p.start(name, None, p.stoppedSet())
		d.Recovery = p.steps
		d.Held = p.held
		return d, nil
	case RefreshEvent:
		if c.State != Running {
			return Decision{}, fmt.Errorf("Event refresh: cluster %q is %s, not running.", name, c.State)
		}
		p.stop(name, LevelRefresh, fmt.Sprintf("%s refreshed", name))
		stopped := p.stoppedSet()
		p.start(name, None, stopped)
		return p.decision(), nil
	case Start:
		c.State = Running
		p.start(name, ev.Reason, nil)
		return p.decision(), nil
	case AdminStop:
		p.adminStop(name)
		return p.decision(), nil
	case AdminStart:
		if c.State != Stopped {
			return Decision{}, fmt.Errorf("Event admin_start: cluster %q is %s, not stopped.", name, c.State)
		}
		c.Starting = true
		v := p.g.check(c)
		c.Starting = false
		if !v.Start {
			c.State = Offline
			p.held = append(p.held, v)
			return p.decision(), nil
		}
		c.State = Running
		p.steps = append(p.steps, Step{Cluster: name, Op: OpStart, Cause: CauseAdmin})
		p.start(name, None, nil)
		return p.decision(), nil
	}
	return Decision{}, fmt.Errorf("Event kind %q is not one of fault, stop, refresh, start, admin_stop, admin_start, milestone or reconcile.", ev.Kind)
}

type propagation struct {
	g       *graph
	steps   []Step
	stopped map[string]bool
	held    []Verdict
}

func clone(s Snapshot) Snapshot {
	out := s
	out.Clusters = slices.Clone(s.Clusters)
	return out
}

func (p *propagation) set(name string, st State) {
	if c, ok := p.g.cluster(name); ok {
		c.State = st
	}
}

func (p *propagation) decision() Decision {
	return Decision{Steps: p.steps, Held: p.held}
}

func (p *propagation) stoppedSet() map[string]bool {
	out := map[string]bool{}
	for k := range p.stopped {
		out[k] = true
	}
	return out
}

// dependsThrough says whether a group reaches the named cluster: the
// cluster itself by name or id, or a milestone that holds it.
func (g *graph) dependsThrough(gr Group, name string) bool {
	for _, m := range gr.Members {
		kind, ref := memberKind(m)
		switch kind {
		case "cluster":
			if g.canonical(ref) == name {
				return true
			}
		case "milestone":
			for _, x := range g.snap.Milestones[ref] {
				if g.canonical(x) == name {
					return true
				}
			}
		}
	}
	return false
}

// dependents are the clusters with a group reaching name, in snapshot
// order, with that group.
func (g *graph) dependents(name string) []struct {
	c  *Cluster
	gr Group
} {
	var out []struct {
		c  *Cluster
		gr Group
	}
	for i := range g.snap.Clusters {
		c := &g.snap.Clusters[i]
		for _, gr := range c.Groups {
			if g.dependsThrough(gr, name) {
				out = append(out, struct {
					c  *Cluster
					gr Group
				}{c, gr})
			}
		}
	}
	return out
}

// stop propagates a stop of name at level through the non-exclude groups
// (§C.3): a running dependent stops iff level is not none and level ≤ its
// group's restart_on, with cause dependency, which propagates on at level
// restart. The steps come leaves first.
func (p *propagation) stop(name string, level Level, why string) {
	for _, d := range p.g.dependents(name) {
		if d.gr.Grouping == ExcludeAll || d.c.State != Running || p.stopped[d.c.Name] {
			continue
		}
		if level == LevelNone || level > d.gr.RestartOn.Level() {
			continue
		}
		d.c.State = Offline
		p.stopped[d.c.Name] = true
		p.stop(d.c.Name, LevelRestart, fmt.Sprintf("%s stopped (dependency)", d.c.Name))
		p.steps = append(p.steps, Step{Cluster: d.c.Name, Op: OpStop, Cause: CauseDependency,
			Because: fmt.Sprintf("%s, group %s restart_on %s", why, d.gr.Name, d.gr.RestartOn)})
	}
}

// excludedStopped re-evaluates, for a start, the offline clusters that
// exclude name (§C.4: when an excluded entity stops, its dependents are
// re-evaluated).
func (p *propagation) excludedStopped(name string) {
	for _, d := range p.g.dependents(name) {
		if d.gr.Grouping != ExcludeAll || d.c.State != Offline || p.stopped[d.c.Name] {
			continue
		}
		if p.g.check(d.c).Start {
			d.c.State = Running
			p.steps = append(p.steps, Step{Cluster: d.c.Name, Op: OpStart, Cause: CauseDependency,
				Because: fmt.Sprintf("excluded %s stopped, group %s", name, d.gr.Name)})
			p.start(d.c.Name, None, nil)
		}
	}
}

// start propagates name coming up (§C.3 propagate_start, §C.4): running
// dependents through exclude_all groups stop unless restart_on is none;
// running dependents through optional_all restart when the start's reason
// is restart or refresh; offline dependents start when every group is
// satisfied, and their start propagates in turn. only, when set, limits the
// starts to those clusters (a recovery restarts what the event stopped).
func (p *propagation) start(name string, reason RestartOn, only map[string]bool) {
	for _, d := range p.g.dependents(name) {
		c := d.c
		switch {
		case d.gr.Grouping == ExcludeAll:
			if c.State != Running || d.gr.RestartOn == None {
				continue
			}
			c.State = Offline
			p.stopped[c.Name] = true
			p.stop(c.Name, LevelRestart, fmt.Sprintf("%s stopped (dependency)", c.Name))
			p.steps = append(p.steps, Step{Cluster: c.Name, Op: OpStop, Cause: CauseDependency,
				Because: fmt.Sprintf("excluded %s started, group %s restart_on %s", name, d.gr.Name, d.gr.RestartOn)})
		case c.State == Running && d.gr.Grouping == OptionalAll && (reason == Restart || reason == Refresh):
			p.steps = append(p.steps,
				Step{Cluster: c.Name, Op: OpStop, Cause: CauseDependency, Because: fmt.Sprintf("%s started (%s), group %s", name, reason, d.gr.Name)},
				Step{Cluster: c.Name, Op: OpStart, Cause: CauseDependency, Because: fmt.Sprintf("%s started (%s), group %s", name, reason, d.gr.Name)})
		case c.State == Offline || c.State == Uninitialized:
			if only != nil && !only[c.Name] {
				continue
			}
			v := p.g.check(c)
			if !v.Start {
				if only != nil && !slices.ContainsFunc(p.held, func(h Verdict) bool { return h.Cluster == c.Name }) {
					p.held = append(p.held, v)
				}
				continue
			}
			c.State = Running
			delete(p.stopped, c.Name)
			p.held = slices.DeleteFunc(p.held, func(h Verdict) bool { return h.Cluster == c.Name })
			p.steps = append(p.steps, Step{Cluster: c.Name, Op: OpStart, Cause: CauseDependency,
				Because: fmt.Sprintf("%s running, group %s satisfied", name, d.gr.Name)})
			p.start(c.Name, None, only)
		}
	}
}

// adminStop is §C.5's admin disable: the running dependents reached through
// non-exclude groups with restart_on restart or refresh stop first, leaves
// first, then the target. Dependents reached otherwise are bypassed and
// stay up.
func (p *propagation) adminStop(name string) {
	target, _ := p.g.cluster(name)
	var walk func(n string)
	walk = func(n string) {
		for _, d := range p.g.dependents(n) {
			if d.gr.Grouping == ExcludeAll || d.gr.RestartOn.Level() < LevelRestart {
				continue
			}
			if d.c.State != Running || p.stopped[d.c.Name] {
				continue
			}
			p.stopped[d.c.Name] = true
			walk(d.c.Name)
			d.c.State = Offline
			p.steps = append(p.steps, Step{Cluster: d.c.Name, Op: OpStop, Cause: CauseDependency,
				Because: fmt.Sprintf("%s is being stopped by an operator, group %s restart_on %s", name, d.gr.Name, d.gr.RestartOn)})
		}
	}
	walk(name)
	if target.State == Running {
		p.steps = append(p.steps, Step{Cluster: name, Op: OpStop, Cause: CauseAdmin})
	}
	target.State = Stopped
	p.excludedStopped(name)
}

// milestone is §C.5's `svcadm milestone`: the subgraph comes up,
// dependencies first; everything else running stops, leaves first.
func (p *propagation) milestone(name string) (Decision, error) {
	in, err := Subgraph(p.g.snap, name)
	if err != nil {
		return Decision{}, err
	}
	inSet := map[string]bool{}
	for _, n := range in {
		inSet[n] = true
	}
	// Stops: leaves first, through every dependency edge among the
	// clusters leaving.
	var walk func(n string)
	walk = func(n string) {
		if p.stopped[n] {
			return
		}
		p.stopped[n] = true
		for _, d := range p.g.dependents(n) {
			if !inSet[d.c.Name] && d.c.State == Running {
				walk(d.c.Name)
			}
		}
		c, _ := p.g.cluster(n)
		c.State = Stopped
		p.steps = append(p.steps, Step{Cluster: n, Op: OpStop, Cause: CauseMilestone,
			Because: fmt.Sprintf("not in milestone %s", name)})
	}
	for _, c := range p.g.snap.Clusters {
		if !inSet[c.Name] && c.State == Running {
			walk(c.Name)
		}
	}
	for _, c := range p.g.snap.Clusters {
		if !inSet[c.Name] && c.State != Maintenance {
			p.set(c.Name, Stopped)
		}
	}
	// Starts: the subgraph in dependency order.
	waves, err := Order(p.g.snap)
	if err != nil {
		return Decision{}, err
	}
	for _, wave := range waves {
		for _, n := range wave {
			c, _ := p.g.cluster(n)
			if !inSet[n] || c.State == Running {
				continue
			}
			if c.State == Stopped {
				c.State = Offline
			}
			v := p.g.check(c)
			if !v.Start {
				p.held = append(p.held, v)
				continue
			}
			c.State = Running
			p.steps = append(p.steps, Step{Cluster: n, Op: OpStart, Cause: CauseMilestone,
				Because: fmt.Sprintf("in milestone %s", name)})
		}
	}
	return p.decision(), nil
}
