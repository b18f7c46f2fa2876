package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/orchestrator/deps"
	"github.com/grovehq/grove/core/store"
)

// Dependencies between clusters and milestones (docs/dependencies.md). The
// rules are core/orchestrator/deps's; this file reads and writes the
// declarations and refuses a declaration that would close a cycle.

// depView is a project's dependency graph as stored, with the snapshot the
// rules evaluate.
type depView struct {
	snap     deps.Snapshot
	clusters map[string]*model.Cluster // by id
	groups   []model.DependencyGroup
	// names maps a cluster id to its name, for display.
	names map[string]string
}

// dependencyView reads a project's clusters, dependency groups and
// milestones. Path members are checked on this agent's host: a path
// dependency is satisfied where the agent evaluating it finds the path.
func dependencyView(ctx context.Context, st store.Store, project string) (*depView, error) {
	cls, err := st.ListClusters(ctx, store.ListOpts{Project: project})
	if err != nil {
		return nil, err
	}
	all, err := st.ListDependencies(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := st.ListMilestones(ctx, store.ListOpts{Project: project})
	if err != nil {
		return nil, err
	}
	v := &depView{clusters: map[string]*model.Cluster{}, names: map[string]string{}}
	for _, c := range cls {
		v.clusters[c.ID] = c
		v.names[c.ID] = c.Name
	}
	for _, g := range all {
		if _, ok := v.clusters[g.ClusterID]; ok {
			v.groups = append(v.groups, g)
		}
	}
	v.snap = deps.Build(cls, all, ms, engine.DepState, func(p string) bool {
		_, err := os.Stat(p)
		return err == nil
	})
	return v, nil
}

// display shows a member by its cluster's name when it is a cluster id.
func (v *depView) display(members []string) []string {
	out := make([]string, 0, len(members))
	for _, m := range members {
		if n, ok := v.names[m]; ok {
			m = n
		}
		out = append(out, m)
	}
	return out
}

func (v *depView) toAPI(cl *model.Cluster) (api.ClusterDependencies, error) {
	verdict, err := deps.Check(v.snap, cl.ID)
	if err != nil {
		return api.ClusterDependencies{}, err
	}
	state := engine.DepState(cl)
	if verdict.Maintenance {
		state = deps.Maintenance
	}
	out := api.ClusterDependencies{ClusterID: cl.ID, ClusterName: cl.Name, State: string(state),
		Result: verdict.Result.String(), Reason: verdict.Reason,
		Groups: []api.HeldGroup{}, Dependents: []api.DependencyGroup{}, RequiredBy: []api.RequiredBy{}}
	results := map[string]deps.GroupVerdict{}
	for _, g := range verdict.Groups {
		results[g.Name] = g
	}
	declared := map[string]*api.DependencyGroup{}
	var order []string
	for _, g := range v.groups {
		group := api.DependencyGroup{Name: g.Name, Grouping: g.Grouping, RestartOn: g.RestartOn, Members: v.display(g.Members)}
		if g.ClusterID == cl.ID {
			r := results[g.Name]
			out.Groups = append(out.Groups, api.HeldGroup{DependencyGroup: group, DeclaredBy: v.names[g.DeclaredBy],
				Result: r.Result.String(), Reason: r.Reason})
		}
		if g.DeclaredBy == cl.ID && g.ClusterID != cl.ID {
			// One dependent declared on several clusters is stored once
			// on each: shown once, with its clusters as members.
			d, ok := declared[g.Name]
			if !ok {
				d = &api.DependencyGroup{Name: g.Name, Grouping: g.Grouping, RestartOn: g.RestartOn, Members: []string{}}
				declared[g.Name] = d
				order = append(order, g.Name)
			}
			d.Members = append(d.Members, v.names[g.ClusterID])
		}
		if g.ClusterID != cl.ID && (contains(g.Members, cl.ID) || contains(g.Members, cl.Name)) {
			out.RequiredBy = append(out.RequiredBy, api.RequiredBy{Cluster: v.names[g.ClusterID], Group: g.Name,
				Grouping: g.Grouping, RestartOn: g.RestartOn})
		}
	}
	for _, n := range order {
		out.Dependents = append(out.Dependents, *declared[n])
	}
	return out, nil
}

func (s *Server) showDependencies(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	cl, err := s.s.FindCluster(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	v, err := dependencyView(s.ctx(r), s.s, cl.Project)
	if err != nil {
		return err
	}
	out, err := v.toAPI(cl)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"dependencies": out})
	return nil
}

// groupsField reads a list of dependency groups from the body, each field
// checked, the error naming where.
func groupsField(body map[string]any, k string) ([]deps.Group, error) {
	raw, ok := body[k]
	if !ok || raw == nil {
		return nil, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, engine.BadRequest("dependencies.%s must be a list of groups.", k)
	}
	var out []deps.Group
	for i, x := range list {
		at := fmt.Sprintf("dependencies.%s[%d]", k, i)
		m, ok := x.(map[string]any)
		if !ok {
			return nil, engine.BadRequest("%s must be an object.", at)
		}
		if err := only(m, at+".", "name", "grouping", "restart_on", "members"); err != nil {
			return nil, err
		}
		var g deps.Group
		for f, dst := range map[string]*string{"name": &g.Name, "grouping": (*string)(&g.Grouping), "restart_on": (*string)(&g.RestartOn)} {
			v, err := nameField(m, f)
			if err != nil {
				return nil, engine.BadRequest("%s.%s", at, err.Error())
			}
			if v != nil {
				*dst = *v
			}
		}
		if g.RestartOn == "" {
			g.RestartOn = deps.None
		}
		members, ok := m["members"].([]any)
		if m["members"] != nil && !ok {
			return nil, engine.BadRequest("%s.members must be a list of strings.", at)
		}
		for j, x := range members {
			ref, ok := x.(string)
			if !ok {
				return nil, engine.BadRequest("%s.members[%d] must be a string.", at, j)
			}
			g.Members = append(g.Members, ref)
		}
		if err := deps.ValidateGroup(g); err != nil {
			if ge, ok := errors.AsType[*deps.GroupError](err); ok {
				return nil, engine.BadRequest("%s.%s: %s", at, ge.Field, ge.Msg)
			}
			return nil, engine.BadRequest("%s: %s", at, err.Error())
		}
		out = append(out, g)
	}
	return out, nil
}

// resolveMember turns a cluster member (a name, an id or a short id) into
// the cluster's name; a cluster or a milestone that does not exist is
// refused, so that a typo is not a dependency that can never be met.
// Members are kept by name, as SMF names services by FMRI: a cluster that
// is replaced (deleted and created again under its name) is still the
// member, and one deleted for good is absent, hence unsatisfiable.
func (v *depView) resolveMember(ctx context.Context, st store.Store, project, at, m string) (string, error) {
	if strings.HasPrefix(m, deps.PathPrefix) {
		return m, nil
	}
	if name, ok := strings.CutPrefix(m, deps.MilestonePrefix); ok {
		if _, ok := v.snap.Milestones[name]; !ok {
			return "", engine.BadRequest("%s: there is no milestone %q; create it first.", at, name)
		}
		return m, nil
	}
	cl, err := st.FindCluster(ctx, project, m)
	if errors.Is(err, store.ErrNotFound) {
		return "", engine.BadRequest("%s: the cluster %q could not be found.", at, m)
	}
	if err != nil {
		return "", err
	}
	return cl.Name, nil
}

func (s *Server) putDependencies(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "dependencies")
	if err != nil {
		return err
	}
	if err := only(body, "dependencies.", "groups", "dependents"); err != nil {
		return err
	}
	own, err := groupsField(body, "groups")
	if err != nil {
		return err
	}
	dependents, err := groupsField(body, "dependents")
	if err != nil {
		return err
	}
	ctx := s.ctx(r)
	cl, err := s.s.FindCluster(ctx, c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	// The check and the write share a transaction, so that the graph the
	// cycle check saw is the one written to.
	var out api.ClusterDependencies
	err = s.s.InTx(ctx, func(tx store.Store) error {
		v, err := dependencyView(ctx, tx, cl.Project)
		if err != nil {
			return err
		}
		now := time.Now().UTC()
		var rows []model.DependencyGroup
		held := map[string][]deps.Group{} // cluster id → groups this declaration puts on it
		for i, g := range own {
			for j, m := range g.Members {
				if g.Members[j], err = v.resolveMember(ctx, tx, cl.Project, fmt.Sprintf("dependencies.groups[%d].members[%d]", i, j), m); err != nil {
					return err
				}
			}
			held[cl.ID] = append(held[cl.ID], g)
			rows = append(rows, model.DependencyGroup{ClusterID: cl.ID, DeclaredBy: cl.ID, Name: g.Name, Grouping: string(g.Grouping),
				RestartOn: string(g.RestartOn), Members: g.Members, CreatedAt: now})
		}
		// A dependent is SMF's import: each of its members holds a group
		// waiting on this cluster.
		for i, g := range dependents {
			for j, m := range g.Members {
				at := fmt.Sprintf("dependencies.dependents[%d].members[%d]", i, j)
				if strings.HasPrefix(m, deps.PathPrefix) || strings.HasPrefix(m, deps.MilestonePrefix) {
					return engine.BadRequest("%s: a dependent names the clusters that wait on this one, not %q.", at, m)
				}
				target, err := tx.FindCluster(ctx, cl.Project, m)
				if errors.Is(err, store.ErrNotFound) {
					return engine.BadRequest("%s: the cluster %q could not be found.", at, m)
				}
				if err != nil {
					return err
				}
				id := target.ID
				gg := deps.Group{Name: g.Name, Grouping: g.Grouping, RestartOn: g.RestartOn, Members: []string{cl.Name}}
				held[id] = append(held[id], gg)
				rows = append(rows, model.DependencyGroup{ClusterID: id, DeclaredBy: cl.ID, Name: g.Name, Grouping: string(g.Grouping),
					RestartOn: string(g.RestartOn), Members: gg.Members, CreatedAt: now})
			}
		}
		// The graph as it will be: what others declared stays, what this
		// cluster declared is replaced.
		kept := map[string][]deps.Group{}
		for _, g := range v.groups {
			if g.DeclaredBy != cl.ID {
				kept[g.ClusterID] = append(kept[g.ClusterID], deps.Group{Name: g.Name, Grouping: deps.Grouping(g.Grouping),
					RestartOn: deps.RestartOn(g.RestartOn), Members: g.Members})
			}
		}
		next := v.snap
		next.Clusters = nil
		var mine []deps.Group
		for _, sc := range v.snap.Clusters {
			groups := append(kept[sc.ID], held[sc.ID]...)
			seen := map[string]bool{}
			for _, g := range groups {
				if seen[g.Name] {
					return engine.Conflict("ResourceInUse", "Cluster %s would hold two dependency groups named %q; rename one.", sc.Name, g.Name)
				}
				seen[g.Name] = true
			}
			sc.Groups = groups
			if sc.ID == cl.ID {
				mine = groups
			}
			next.Clusters = append(next.Clusters, sc)
		}
		if err := deps.CheckDeclare(next, cl.ID, mine); err != nil {
			var ce *deps.CycleError
			if errors.As(err, &ce) {
				return engine.Conflict("DependencyCycle", "%s", err.Error())
			}
			return engine.BadRequest("%s", err.Error())
		}
		if err := tx.ReplaceDeclaredDependencies(ctx, cl.ID, rows); err != nil {
			return err
		}
		after, err := dependencyView(ctx, tx, cl.Project)
		if err != nil {
			return err
		}
		out, err = after.toAPI(cl)
		return err
	})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"dependencies": out})
	return nil
}

// Milestones.

var milestoneSort = []string{"name", "created_at", "user"}

func (s *Server) toMilestone(ctx context.Context, m *model.Milestone) api.Milestone {
	names := make([]string, 0, len(m.Clusters))
	for _, id := range m.Clusters {
		if cl, err := s.s.GetCluster(ctx, id); err == nil {
			id = cl.Name
		}
		names = append(names, id)
	}
	return api.Milestone{ID: m.ID, Name: m.Name, Clusters: names, User: m.User, Project: m.Project, Domain: m.Domain,
		CreatedAt: ts(m.CreatedAt), UpdatedAt: tsPtr(m.UpdatedAt)}
}

func (s *Server) listMilestones(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	o, err := listOpts(r, c, []string{"name", "user"}, milestoneSort)
	if err != nil {
		return err
	}
	ms, err := s.s.ListMilestones(s.ctx(r), o)
	if err != nil {
		return err
	}
	out := make([]api.Milestone, 0, len(ms))
	for _, m := range ms {
		out = append(out, s.toMilestone(s.ctx(r), m))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"milestones": out})
	return nil
}

// milestoneFields reads a milestone's name and clusters.
func (s *Server) milestoneFields(ctx context.Context, project string, body map[string]any) (*string, []string, bool, error) {
	if err := only(body, "milestone.", "name", "clusters"); err != nil {
		return nil, nil, false, err
	}
	name, err := nameField(body, "name")
	if err != nil {
		return nil, nil, false, engine.BadRequest("milestone.%s", err.Error())
	}
	if name != nil {
		if err := checkMilestoneName(*name); err != nil {
			return nil, nil, false, err
		}
	}
	raw, has := body["clusters"]
	if !has || raw == nil {
		return name, nil, false, nil
	}
	list, ok := raw.([]any)
	if !ok {
		return nil, nil, false, engine.BadRequest("milestone.clusters must be a list of cluster names or ids.")
	}
	names := []string{}
	for i, x := range list {
		ref, ok := x.(string)
		if !ok {
			return nil, nil, false, engine.BadRequest("milestone.clusters[%d] must be a string.", i)
		}
		cl, err := s.s.FindCluster(ctx, project, ref)
		if errors.Is(err, store.ErrNotFound) {
			return nil, nil, false, engine.BadRequest("milestone.clusters[%d]: the cluster %q could not be found.", i, ref)
		}
		if err != nil {
			return nil, nil, false, err
		}
		if contains(names, cl.Name) {
			return nil, nil, false, engine.BadRequest("milestone.clusters[%d]: the cluster %q is listed twice.", i, ref)
		}
		names = append(names, cl.Name)
	}
	return name, names, true, nil
}

// checkMilestoneName keeps SMF's reserved names free: `all` and `none` are
// what `grove milestone enter` means by the whole graph and the empty one.
func checkMilestoneName(n string) error {
	switch {
	case n == "":
		return engine.BadRequest("milestone.name must not be empty.")
	case n == "all" || n == "none":
		return engine.BadRequest("milestone.name %q is reserved: entering %q means every cluster or none.", n, n)
	case strings.ContainsAny(n, ":/ "):
		return engine.BadRequest("milestone.name %q must not contain ':', '/' or spaces (members name it as milestone:NAME).", n)
	}
	return nil
}

func (s *Server) createMilestone(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "milestone")
	if err != nil {
		return err
	}
	name, clusters, _, err := s.milestoneFields(s.ctx(r), c.Project, body)
	if err != nil {
		return err
	}
	if name == nil {
		return engine.BadRequest("milestone.name is required.")
	}
	if clusters == nil {
		clusters = []string{}
	}
	m := &model.Milestone{ID: uuid.NewString(), Name: *name, Clusters: clusters, User: c.User, Project: c.Project,
		CreatedAt: time.Now().UTC()}
	if err := s.s.CreateMilestone(s.ctx(r), m); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"milestone": s.toMilestone(s.ctx(r), m)})
	return nil
}

func (s *Server) showMilestone(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	m, err := s.s.FindMilestone(s.ctx(r), c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"milestone": s.toMilestone(s.ctx(r), m)})
	return nil
}

func (s *Server) updateMilestone(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	body, err := decode(r, "milestone")
	if err != nil {
		return err
	}
	ctx := s.ctx(r)
	m, err := s.s.FindMilestone(ctx, c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	name, clusters, hasClusters, err := s.milestoneFields(ctx, c.Project, body)
	if err != nil {
		return err
	}
	err = s.s.InTx(ctx, func(tx store.Store) error {
		v, err := dependencyView(ctx, tx, c.Project)
		if err != nil {
			return err
		}
		if name != nil && *name != m.Name {
			// Groups name a milestone by its name: renaming one in use
			// would leave them naming nothing.
			for _, g := range v.groups {
				if contains(g.Members, deps.MilestonePrefix+m.Name) {
					return engine.Conflict("ResourceInUse", "The milestone %s is a member of dependency group %s of cluster %s; it cannot be renamed.", m.Name, g.Name, v.names[g.ClusterID])
				}
			}
			m.Name = *name
		}
		if hasClusters {
			m.Clusters = clusters
			next := v.snap
			next.Milestones = map[string][]string{}
			for k, x := range v.snap.Milestones {
				next.Milestones[k] = x
			}
			next.Milestones[m.Name] = clusters
			if err := deps.CheckCycles(next); err != nil {
				return engine.Conflict("DependencyCycle", "%s", err.Error())
			}
		}
		now := time.Now().UTC()
		m.UpdatedAt = &now
		return tx.UpdateMilestone(ctx, m)
	})
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"milestone": s.toMilestone(ctx, m)})
	return nil
}

func (s *Server) deleteMilestone(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	ctx := s.ctx(r)
	m, err := s.s.FindMilestone(ctx, c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	v, err := dependencyView(ctx, s.s, c.Project)
	if err != nil {
		return err
	}
	for _, g := range v.groups {
		if contains(g.Members, deps.MilestonePrefix+m.Name) {
			return engine.Conflict("ResourceInUse", "The milestone %s is a member of dependency group %s of cluster %s; remove it from the group first.", m.Name, g.Name, v.names[g.ClusterID])
		}
	}
	if err := s.s.DeleteMilestone(ctx, m.ID); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
