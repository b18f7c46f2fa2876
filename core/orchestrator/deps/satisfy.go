package deps

import (
	"fmt"
	"strings"
)

// GroupVerdict is one group's evaluation.
type GroupVerdict struct {
	Name     string   `json:"name"`
	Grouping Grouping `json:"grouping"`
	Result   Result   `json:"result"`
	// Reason names the member that holds the group back, empty when the
	// group is satisfied.
	Reason string `json:"reason,omitempty"`
}

// Verdict is whether a cluster may start, and why not.
type Verdict struct {
	Cluster string `json:"cluster"`
	// Start is true when the cluster is offline (or being started) and every
	// group is satisfied (§C.2's start decision).
	Start bool `json:"start"`
	// Result is the top-level require_all over the groups, evaluated with
	// the satisfiability recursion, so -1 means it will not start without
	// an operator.
	Result Result `json:"result"`
	// Maintenance is set when the cluster is on a dependency cycle (§C.5).
	Maintenance bool `json:"maintenance,omitempty"`
	// Reason is a sentence fragment for `grove cluster status`: "waiting
	// on db: maintenance", "dependency cycle: a → b → a"; empty when
	// nothing holds the cluster back.
	Reason string         `json:"reason,omitempty"`
	Groups []GroupVerdict `json:"groups,omitempty"`
}

// Check evaluates a cluster's dependencies in a snapshot.
func Check(s Snapshot, cluster string) (Verdict, error) {
	g := newGraph(s)
	c, ok := g.cluster(cluster)
	if !ok {
		return Verdict{}, fmt.Errorf("Cluster %q is not in the snapshot.", cluster)
	}
	return g.check(c), nil
}

// CheckAll evaluates every cluster of a snapshot, in the snapshot's order.
func CheckAll(s Snapshot) []Verdict {
	g := newGraph(s)
	out := make([]Verdict, 0, len(s.Clusters))
	for i := range g.snap.Clusters {
		out = append(out, g.check(&g.snap.Clusters[i]))
	}
	return out
}

func (g *graph) check(c *Cluster) Verdict {
	v := Verdict{Cluster: c.Name, Result: Satisfied}
	if cyc, ok := g.cycles[c.Name]; ok {
		v.Maintenance = true
		v.Result = Unsatisfiable
		v.Reason = "dependency cycle: " + strings.Join(cyc, " → ")
		return v
	}
	startNow := Satisfied
	for _, gr := range c.Groups {
		r, culprit := g.group(gr, true, map[string]bool{c.Name: true})
		quick, _ := g.group(gr, false, map[string]bool{c.Name: true})
		startNow = combineAll(startNow, quick)
		gv := GroupVerdict{Name: gr.Name, Grouping: gr.Grouping, Result: r}
		if r != Satisfied {
			gv.Reason = culprit
			if v.Reason == "" {
				v.Reason = culprit
			}
		}
		v.Result = combineAll(v.Result, r)
		v.Groups = append(v.Groups, gv)
	}
	startable := c.State == Offline || c.State == Uninitialized || (c.State == Stopped && c.Starting)
	v.Start = startable && startNow == Satisfied && !c.Stopping
	return v
}

// combineAll folds results as require_all does: -1 wins, then 0.
func combineAll(a, b Result) Result {
	if a == Unsatisfiable || b == Unsatisfiable {
		return Unsatisfiable
	}
	if a == Unsatisfied || b == Unsatisfied {
		return Unsatisfied
	}
	return Satisfied
}

// satisfied is a cluster's own dependencies (instance_satisfied): the
// require_all of its groups. visiting guards the satisfiability recursion;
// a cluster met again counts as still to come.
func (g *graph) satisfied(c *Cluster, sat bool, visiting map[string]bool) Result {
	if visiting[c.Name] {
		return Unsatisfied
	}
	visiting[c.Name] = true
	defer delete(visiting, c.Name)
	r := Satisfied
	for _, gr := range c.Groups {
		x, _ := g.group(gr, sat, visiting)
		r = combineAll(r, x)
	}
	return r
}

// group evaluates one group and, when it is not satisfied, says which
// member holds it back.
func (g *graph) group(gr Group, sat bool, visiting map[string]bool) (Result, string) {
	switch gr.Grouping {
	case RequireAny:
		return g.requireAny(gr.Members, sat, visiting)
	case OptionalAll:
		return g.optionalAll(gr.Members, visiting)
	case ExcludeAll:
		return g.excludeAll(gr.Members)
	}
	return g.requireAll(gr.Members, sat, visiting)
}

func (g *graph) requireAll(members []string, sat bool, visiting map[string]bool) (Result, string) {
	r, why := Satisfied, ""
	for _, m := range members {
		x, desc := g.member(m, sat, visiting)
		if x < r {
			r, why = x, waiting(g.display(m), desc)
		}
	}
	return r, why
}

func (g *graph) requireAny(members []string, sat bool, visiting map[string]bool) (Result, string) {
	if len(members) == 0 {
		return Satisfied, ""
	}
	r, why := Unsatisfiable, ""
	for _, m := range members {
		x, desc := g.member(m, sat, visiting)
		if x == Satisfied {
			return Satisfied, ""
		}
		if why == "" || (x == Unsatisfied && r == Unsatisfiable) {
			why = waiting(g.display(m), desc)
		}
		if x == Unsatisfied {
			r = Unsatisfied
		}
	}
	if r == Unsatisfiable {
		names := make([]string, len(members))
		for i, m := range members {
			names[i] = g.display(m)
		}
		why = "none of " + strings.Join(names, ", ") + " can run"
	}
	return r, why
}

// optionalAll follows §C.2: only qualified members count; a stopped
// cluster counts as met unless it is being started; an offline one is met
// once its own dependencies cannot be.
func (g *graph) optionalAll(members []string, visiting map[string]bool) (Result, string) {
	r, why := Satisfied, ""
	for _, m := range members {
		kind, ref := memberKind(m)
		var x Result
		var desc string
		switch kind {
		case "path":
			x, desc = g.member(m, true, visiting)
		case "milestone":
			ms, ok := g.snap.Milestones[ref]
			if !ok {
				continue
			}
			q, _ := g.requireAll(ms, false, visiting)
			switch {
			case q == Satisfied:
				x = Satisfied
			default:
				full, _ := g.requireAll(ms, true, visiting)
				x, desc = Unsatisfied, "not reached"
				if full == Unsatisfiable {
					x = Satisfied
				}
			}
		default:
			c, ok := g.cluster(ref)
			if !ok || c.State == Maintenance || g.onCycle(c) {
				continue
			}
			switch {
			case c.Stopping:
				x, desc = Unsatisfiable, "stopping"
			case c.State == Stopped:
				x = Satisfied
				if c.Starting {
					x, desc = Unsatisfied, "starting"
				}
			case c.State == Offline:
				x, desc = Unsatisfied, string(Offline)
				if g.satisfied(c, true, visiting) == Unsatisfiable {
					x = Satisfied
				}
			case c.State == Running:
				x = Satisfied
			default:
				x, desc = Unsatisfied, string(c.State)
			}
		}
		if x < r {
			r, why = x, waiting(g.display(m), desc)
		}
	}
	return r, why
}

// excludeAll is satisfied unless a member is or may become up (§C.2).
func (g *graph) excludeAll(members []string) (Result, string) {
	r, why := Satisfied, ""
	for _, m := range members {
		kind, ref := memberKind(m)
		x, desc := Satisfied, ""
		switch kind {
		case "path":
			if g.snap.Paths[ref] {
				x, desc = Unsatisfiable, "exists"
			}
		case "milestone":
			ms, ok := g.snap.Milestones[ref]
			if !ok {
				continue
			}
			q, _ := g.requireAll(ms, false, map[string]bool{})
			if q == Satisfied {
				x, desc = Unsatisfiable, "reached"
			} else {
				x, desc = Unsatisfied, "may be reached"
			}
		default:
			c, ok := g.cluster(ref)
			if !ok {
				continue
			}
			switch c.State {
			case Running:
				x, desc = Unsatisfiable, string(Running)
				if c.Stopping {
					x, desc = Unsatisfied, "stopping"
				}
			case Offline, Uninitialized:
				x, desc = Unsatisfied, string(c.State)
			}
		}
		if x < r {
			r, why = x, "excluded "+g.display(m)+" "+desc
		}
	}
	return r, why
}

// member is one member's value for require_all and require_any
// (dependency_satisfied) and the word that describes it.
func (g *graph) member(m string, sat bool, visiting map[string]bool) (Result, string) {
	kind, ref := memberKind(m)
	switch kind {
	case "path":
		if g.snap.Paths[ref] {
			return Satisfied, ""
		}
		return Unsatisfiable, "does not exist"
	case "milestone":
		ms, ok := g.snap.Milestones[ref]
		if !ok {
			return Unsatisfiable, "no such milestone"
		}
		q, _ := g.requireAll(ms, false, visiting)
		if q == Satisfied {
			return Satisfied, ""
		}
		if sat {
			if full, why := g.requireAll(ms, true, visiting); full == Unsatisfiable {
				return Unsatisfiable, why
			}
		}
		return Unsatisfied, "not reached"
	}
	c, ok := g.cluster(ref)
	if !ok {
		return Unsatisfiable, "no such cluster"
	}
	if g.onCycle(c) {
		return Unsatisfiable, "dependency cycle"
	}
	if c.Stopping {
		return Unsatisfiable, "stopping"
	}
	switch c.State {
	case Running:
		return Satisfied, ""
	case Offline:
		if sat && g.satisfied(c, true, visiting) == Unsatisfiable {
			return Unsatisfiable, "offline, its dependencies cannot be met"
		}
		return Unsatisfied, string(Offline)
	case Uninitialized:
		return Unsatisfied, string(Uninitialized)
	}
	return Unsatisfiable, string(c.State)
}

func (g *graph) onCycle(c *Cluster) bool {
	_, ok := g.cycles[c.Name]
	return ok
}

func waiting(m, desc string) string {
	if desc == "" {
		return ""
	}
	return "waiting on " + m + ": " + desc
}

// display names a member for a reason: a cluster by its name, whatever
// the member says (an id).
func (g *graph) display(m string) string {
	if kind, _ := memberKind(m); kind == "cluster" {
		if c, ok := g.cluster(m); ok {
			return c.Name
		}
	}
	return m
}
