package deps

import (
	"fmt"
	"slices"
)

// Reconcile decides, from a snapshot alone, the stops that propagation
// (§C.3–C.4) owes the graph: a running cluster stops, with cause
// dependency, when one of its non-exclude groups is not satisfied because a
// member is down (Cluster.Down) at a level its restart_on reaches, or when
// an exclude_all group with restart_on other than none has a member
// running. Each such stop is itself a non-error stop, so it reaches its own
// dependents at level restart and no further (the cascade subtlety). The
// steps come leaves first.
//
// It is the level-triggered side of what Propagate does on an event: an
// agent that dies in the middle of a cascade leaves the graph in a state
// where Reconcile returns the steps still to take, and a graph at rest
// returns none. A group that is satisfied anyway (require_any with another
// member up, optional_all over a stopped member) does not stop its
// cluster: the event's restart bounce is not replayed, since the cluster
// would start again at once.
func Reconcile(s Snapshot) Decision {
	g := newGraph(clone(s))
	because := map[string]string{}
	for changed := true; changed; {
		changed = false
		for i := range g.snap.Clusters {
			c := &g.snap.Clusters[i]
			if c.State != Running || c.Stopping {
				continue
			}
			if why := g.owedStop(c); why != "" {
				c.State, c.Down = Offline, LevelRestart
				because[c.Name] = why
				changed = true
			}
		}
	}
	var steps []Step
	done := map[string]bool{}
	var visit func(name string)
	visit = func(name string) {
		if done[name] {
			return
		}
		done[name] = true
		for _, d := range g.dependents(name) {
			if _, ok := because[d.c.Name]; ok && d.gr.Grouping != ExcludeAll {
				visit(d.c.Name)
			}
		}
		steps = append(steps, Step{Cluster: name, Op: OpStop, Cause: CauseDependency, Because: because[name]})
	}
	for _, c := range g.snap.Clusters {
		if _, ok := because[c.Name]; ok {
			visit(c.Name)
		}
	}
	return Decision{Steps: steps}
}

// owedStop says why a running cluster must stop now, or "".
func (g *graph) owedStop(c *Cluster) string {
	for _, gr := range c.Groups {
		if gr.Grouping == ExcludeAll {
			if gr.RestartOn == None {
				continue
			}
			for _, m := range g.clusterMembers(gr) {
				if x, ok := g.cluster(m); ok && x.State == Running && !x.Stopping {
					return fmt.Sprintf("excluded %s running, group %s restart_on %s", x.Name, gr.Name, gr.RestartOn)
				}
			}
			continue
		}
		if r, _ := g.group(gr, false, map[string]bool{c.Name: true}); r == Satisfied {
			continue
		}
		for _, m := range g.clusterMembers(gr) {
			x, ok := g.cluster(m)
			if !ok || x.State == Running || x.Down == LevelNone || x.Down > gr.RestartOn.Level() {
				continue
			}
			return fmt.Sprintf("%s is down (%s), group %s restart_on %s", x.Name, x.Down, gr.Name, gr.RestartOn)
		}
	}
	return ""
}

// clusterMembers are a group's cluster members, a milestone standing for
// its clusters, by name.
func (g *graph) clusterMembers(gr Group) []string {
	var out []string
	for _, m := range gr.Members {
		kind, ref := memberKind(m)
		switch kind {
		case "cluster":
			out = append(out, g.canonical(ref))
		case "milestone":
			for _, x := range g.snap.Milestones[ref] {
				out = append(out, g.canonical(x))
			}
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}
