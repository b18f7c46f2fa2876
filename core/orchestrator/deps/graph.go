package deps

import (
	"fmt"
	"sort"
	"strings"
)

// edges are a cluster's dependencies for the cycle walk and the order:
// members of non-exclude groups (§C.4: exclusion edges are skipped), a
// milestone standing for its clusters, paths left out.
func (g *graph) edges(c *Cluster) []string {
	var out []string
	for _, gr := range c.Groups {
		if gr.Grouping == ExcludeAll {
			continue
		}
		for _, m := range gr.Members {
			kind, _ := memberKind(m)
			if kind != "path" {
				out = append(out, m)
			}
		}
	}
	return out
}

// next is where a walk goes from a node: a cluster's edges, or a
// milestone's clusters. Unknown names lead nowhere.
func (g *graph) next(node string) []string {
	if kind, ref := memberKind(node); kind == "milestone" {
		return g.snap.Milestones[ref]
	}
	c, ok := g.cluster(node)
	if !ok {
		return nil
	}
	return g.edges(c)
}

// canonical names a node by its cluster's name when it has one.
func (g *graph) canonical(node string) string {
	if kind, _ := memberKind(node); kind == "milestone" {
		return node
	}
	if c, ok := g.cluster(node); ok {
		return c.Name
	}
	return node
}

// pathBack finds a path from node back to target by DFS, the names along
// it, or nil.
func (g *graph) pathBack(from, target string) []string {
	seen := map[string]bool{}
	var walk func(n string) []string
	walk = func(n string) []string {
		n = g.canonical(n)
		if n == target {
			return []string{n}
		}
		if seen[n] {
			return nil
		}
		seen[n] = true
		for _, m := range g.next(n) {
			if p := walk(m); p != nil {
				return append([]string{n}, p...)
			}
		}
		return nil
	}
	return walk(from)
}

// clustersOnCycles maps each cluster on a cycle to the cycle, starting and
// ending with that cluster.
func (g *graph) clustersOnCycles() map[string][]string {
	out := map[string][]string{}
	for i := range g.snap.Clusters {
		c := &g.snap.Clusters[i]
		for _, m := range g.edges(c) {
			if p := g.pathBack(m, c.Name); p != nil {
				out[c.Name] = append([]string{c.Name}, p...)
				break
			}
		}
	}
	return out
}

// Cycle returns the first dependency cycle of the snapshot, in the
// snapshot's order of clusters, as the names along it from a cluster back
// to itself ("web", "milestone:multi-user", "db", "web"); nil when there
// is none.
func Cycle(s Snapshot) []string {
	g := newGraph(s)
	for _, c := range s.Clusters {
		if p, ok := g.cycles[c.Name]; ok {
			return p
		}
	}
	return nil
}

// CycleError is a refused declaration: the dependencies would close a
// cycle (§C.5).
type CycleError struct {
	Cycle []string
}

func (e *CycleError) Error() string {
	return fmt.Sprintf("The dependencies would form a cycle: %s. Cycles are allowed only through exclude_all groups.", strings.Join(e.Cycle, " → "))
}

// CheckDeclare validates groups about to be declared on a cluster and
// refuses them when, with the snapshot's other declarations, they would
// close a cycle; the error names the whole cycle.
func CheckDeclare(s Snapshot, cluster string, groups []Group) error {
	names := map[string]bool{}
	for _, gr := range groups {
		if err := ValidateGroup(gr); err != nil {
			return err
		}
		if names[gr.Name] {
			return fmt.Errorf("Dependency group %q is declared twice on cluster %q.", gr.Name, cluster)
		}
		names[gr.Name] = true
	}
	next := Snapshot{Milestones: s.Milestones, Paths: s.Paths}
	found := false
	for _, c := range s.Clusters {
		if c.Name == cluster || (c.ID != "" && c.ID == cluster) {
			c.Groups = groups
			found = true
		}
		next.Clusters = append(next.Clusters, c)
	}
	if !found {
		next.Clusters = append(next.Clusters, Cluster{Name: cluster, State: Offline, Groups: groups})
	}
	// Name the cycle from the cluster being declared, where the reader
	// looks first.
	g := newGraph(next)
	if c, ok := g.cluster(cluster); ok {
		if p, ok := g.cycles[c.Name]; ok {
			return &CycleError{Cycle: p}
		}
	}
	return CheckCycles(next)
}

// CheckCycles refuses a snapshot with a dependency cycle, naming it.
func CheckCycles(s Snapshot) error {
	if c := Cycle(s); c != nil {
		return &CycleError{Cycle: c}
	}
	return nil
}

// Order sorts the clusters so that each comes after everything it depends
// on (through non-exclude groups): the waves of a start, each wave's
// clusters in name order. A cycle is an error naming it.
func Order(s Snapshot) ([][]string, error) {
	if err := CheckCycles(s); err != nil {
		return nil, err
	}
	g := newGraph(s)
	// needs[c] are the clusters c waits for, milestones expanded.
	needs := map[string]map[string]bool{}
	for i := range g.snap.Clusters {
		c := &g.snap.Clusters[i]
		set := map[string]bool{}
		var add func(n string, seen map[string]bool)
		add = func(n string, seen map[string]bool) {
			n = g.canonical(n)
			if seen[n] {
				return
			}
			seen[n] = true
			if kind, _ := memberKind(n); kind == "milestone" {
				for _, m := range g.next(n) {
					add(m, seen)
				}
				return
			}
			if _, ok := g.cluster(n); ok {
				set[n] = true
			}
		}
		seen := map[string]bool{}
		for _, m := range g.edges(c) {
			add(m, seen)
		}
		needs[c.Name] = set
	}
	done := map[string]bool{}
	var waves [][]string
	for len(done) < len(needs) {
		var wave []string
		for name, set := range needs {
			if done[name] {
				continue
			}
			ready := true
			for d := range set {
				ready = ready && done[d]
			}
			if ready {
				wave = append(wave, name)
			}
		}
		if len(wave) == 0 {
			return nil, fmt.Errorf("The dependency order cannot be found.")
		}
		sort.Strings(wave)
		for _, n := range wave {
			done[n] = true
		}
		waves = append(waves, wave)
	}
	return waves, nil
}

// Subgraph is a milestone's subgraph (§C.5): its clusters and everything
// they transitively depend on, exclusions not followed and, under
// optional_all, stopped clusters skipped. "all" is every cluster and
// "none" no cluster. The names come back sorted.
func Subgraph(s Snapshot, milestone string) ([]string, error) {
	g := newGraph(s)
	in := map[string]bool{}
	switch milestone {
	case "all":
		for _, c := range s.Clusters {
			in[c.Name] = true
		}
	case "none":
	default:
		roots, ok := s.Milestones[milestone]
		if !ok {
			return nil, fmt.Errorf("There is no milestone %q.", milestone)
		}
		var walk func(n string)
		walk = func(n string) {
			if kind, ref := memberKind(n); kind == "milestone" {
				for _, m := range s.Milestones[ref] {
					walk(m)
				}
				return
			}
			c, ok := g.cluster(n)
			if !ok || in[c.Name] {
				return
			}
			in[c.Name] = true
			for _, gr := range c.Groups {
				if gr.Grouping == ExcludeAll {
					continue
				}
				for _, m := range gr.Members {
					if gr.Grouping == OptionalAll {
						if d, ok := g.cluster(m); ok && d.State == Stopped {
							continue
						}
					}
					walk(m)
				}
			}
		}
		for _, r := range roots {
			walk(r)
		}
	}
	out := make([]string, 0, len(in))
	for n := range in {
		out = append(out, n)
	}
	sort.Strings(out)
	return out, nil
}
