package deps

import (
	"strings"

	"github.com/grovehq/grove/core/model"
)

// Build makes the snapshot of a project's graph from what the store holds:
// its clusters, every dependency group (groups held by clusters not in
// clusters are left out) and its milestones. Members and milestone
// clusters stored as ids are named by their clusters' names, so reasons
// and steps read "waiting on db"; each cluster's Down comes from its run
// data (DownOf). state gives each cluster's
// state (nil: StateOf its status alone, for callers without run data);
// exists says whether a path member exists on the evaluating agent's host,
// the one piece of I/O, handed in.
func Build(clusters []*model.Cluster, groups []model.DependencyGroup, milestones []*model.Milestone,
	state func(*model.Cluster) State, exists func(path string) bool) Snapshot {
	if state == nil {
		state = func(c *model.Cluster) State { return StateOf(c.Status, false, "", false) }
	}
	s := Snapshot{Milestones: map[string][]string{}, Paths: map[string]bool{}}
	in := map[string]bool{}
	names := map[string]string{}
	for _, c := range clusters {
		in[c.ID] = true
		names[c.ID] = c.Name
	}
	named := func(ids []string) []string {
		out := make([]string, len(ids))
		for i, m := range ids {
			out[i] = m
			if n, ok := names[m]; ok {
				out[i] = n
			}
		}
		return out
	}
	held := map[string][]Group{}
	for _, g := range groups {
		if !in[g.ClusterID] {
			continue
		}
		held[g.ClusterID] = append(held[g.ClusterID], Group{Name: g.Name, Grouping: Grouping(g.Grouping), RestartOn: RestartOn(g.RestartOn), Members: named(g.Members)})
		for _, m := range g.Members {
			if p, ok := strings.CutPrefix(m, PathPrefix); ok && exists != nil {
				s.Paths[p] = exists(p)
			}
		}
	}
	for _, c := range clusters {
		s.Clusters = append(s.Clusters, Cluster{Name: c.Name, ID: c.ID, State: state(c), Down: DownOf(c), Groups: held[c.ID]})
	}
	for _, m := range milestones {
		s.Milestones[m.Name] = named(m.Clusters)
	}
	return s
}

// DownOf is the level at which a cluster's not running propagates, from its
// run data: a fault (a node died) at level fault, a stop (by an operator, a
// milestone or a dependency, a restart under way) at level restart, nothing
// otherwise.
func DownOf(c *model.Cluster) Level {
	r := model.RunDataOf(c)
	switch {
	case r.Stopped:
		return LevelRestart
	case r.Fault:
		return LevelFault
	}
	return LevelNone
}
