package hcl

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/zclconf/go-cty/cty"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/orchestrator/deps"
)

// depends_on blocks and milestone blocks (docs/dependencies.md): decoded
// here, checked with core/orchestrator/deps's rules, and declared on the
// agent by apply after the clusters they name exist.

// memberOf reads one member: a cluster reference (cluster.db), a
// milestone reference (milestone.multi_user) or a string.
func memberOf(v cty.Value) (string, bool) {
	switch {
	case v.IsNull() || !v.IsKnown():
		return "", false
	case v.Type() == cty.String:
		return v.AsString(), true
	case v.Type().IsObjectType() && v.Type().HasAttribute("member"):
		if m := v.GetAttr("member"); m.Type() == cty.String {
			return m.AsString(), true
		}
	case v.Type().IsObjectType() && v.Type().HasAttribute("name"):
		if n := v.GetAttr("name"); n.Type() == cty.String {
			return n.AsString(), true
		}
	}
	return "", false
}

// decodeDependsOn decodes a depends_on block, or a dependent block (sb's
// type says which): the same fields and rules, a dependent's members being
// only clusters.
func (e *evaluator) decodeDependsOn(c *Cluster, sb *hclv2.Block, attrs *hclv2.BodyContent) (*DependsOn, hclv2.Diagnostics) {
	var diags hclv2.Diagnostics
	g := &DependsOn{Name: sb.Labels[0], RestartOn: string(deps.None)}
	bad := func(rng hclv2.Range, format string, args ...any) {
		diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid " + sb.Type + " block",
			Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()})
	}
	declared := c.DependsOn
	if sb.Type == "dependent" {
		declared = c.Dependents
	}
	for _, other := range declared {
		if other.Name == g.Name {
			bad(sb.LabelRanges[0], "%s %q is declared twice in cluster %q; its names are unique within a cluster.", sb.Type, g.Name, c.Name)
			return nil, diags
		}
	}
	for name, dst := range map[string]*string{"grouping": &g.Grouping, "restart_on": &g.RestartOn} {
		a := attrs.Attributes[name]
		if a == nil {
			continue
		}
		v, ds := a.Expr.Value(e.ctx)
		diags = append(diags, ds...)
		if ds.HasErrors() {
			continue
		}
		if v.IsNull() || v.Type() != cty.String {
			bad(a.Expr.Range(), "%s must be a string.", name)
			continue
		}
		*dst = v.AsString()
	}
	a := attrs.Attributes["members"]
	v, ds := a.Expr.Value(e.ctx)
	diags = append(diags, ds...)
	if ds.HasErrors() {
		return nil, diags
	}
	if v.IsNull() || !v.CanIterateElements() || v.Type().IsMapType() || v.Type().IsObjectType() {
		bad(a.Expr.Range(), "members must be a list of cluster references (cluster.db), milestone references (milestone.multi_user) or strings (\"db\", \"milestone:NAME\", \"path:/etc/app.conf\").")
		return nil, diags
	}
	g.Members = []string{}
	for it := v.ElementIterator(); it.Next(); {
		_, ev := it.Element()
		m, ok := memberOf(ev)
		if !ok {
			bad(a.Expr.Range(), "members must be a list of cluster references (cluster.db), milestone references (milestone.multi_user) or strings (\"db\", \"milestone:NAME\", \"path:/etc/app.conf\").")
			return nil, diags
		}
		g.Members = append(g.Members, m)
	}
	if diags.HasErrors() {
		return nil, diags
	}
	if err := deps.ValidateGroup(deps.Group{Name: g.Name, Grouping: deps.Grouping(g.Grouping), RestartOn: deps.RestartOn(g.RestartOn), Members: g.Members}); err != nil {
		// Point at the attribute the rule is about, and at the member
		// itself when the list is written out.
		rng := sb.DefRange
		if ge, ok := errors.AsType[*deps.GroupError](err); ok {
			switch {
			case ge.Member >= 0:
				rng = a.Expr.Range()
				if elems, d := hclv2.ExprList(a.Expr); !d.HasErrors() && ge.Member < len(elems) {
					rng = elems[ge.Member].Range()
				}
			case attrs.Attributes[ge.Field] != nil:
				rng = attrs.Attributes[ge.Field].Expr.Range()
			}
		}
		bad(rng, "%s", err.Error())
		return nil, diags
	}
	for _, m := range g.Members {
		if sb.Type == "dependent" && (strings.HasPrefix(m, deps.MilestonePrefix) || strings.HasPrefix(m, deps.PathPrefix)) {
			bad(a.Expr.Range(), "dependent %q: member %q is not a cluster; a dependent's members are the clusters that wait on cluster %q.", g.Name, m, c.Name)
			return nil, diags
		}
		if name, ok := strings.CutPrefix(m, deps.MilestonePrefix); ok && (name == "all" || name == "none") {
			bad(a.Expr.Range(), "member %q names a reserved milestone; all and none are not sets a cluster can depend on.", m)
			return nil, diags
		}
	}
	return g, diags
}

func (e *evaluator) decodeMilestone(b *hclv2.Block) (*Milestone, hclv2.Diagnostics) {
	content, diags := b.Body.Content(milestoneSchema)
	if diags.HasErrors() {
		return nil, diags
	}
	name := b.Labels[0]
	if name == "all" || name == "none" {
		return nil, append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid milestone",
			Detail: fmt.Sprintf("The milestone name %q is reserved: entering %q means every cluster or none.", name, name), Subject: b.LabelRanges[0].Ptr()})
	}
	l, ds := e.refList(content.Attributes["clusters"], "cluster")
	diags = append(diags, ds...)
	m := &Milestone{Name: name, Clusters: []string{}}
	seen := map[string]bool{}
	for _, x := range l {
		n := x.(string)
		if seen[n] {
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid milestone",
				Detail: fmt.Sprintf("clusters lists %q twice.", n), Subject: content.Attributes["clusters"].Expr.Range().Ptr()})
		}
		seen[n] = true
		m.Clusters = append(m.Clusters, n)
	}
	return m, diags
}

// depSnapshot is the definition's dependency graph, every cluster offline.
func depSnapshot(clusters map[string]*Cluster, milestones map[string]*Milestone) deps.Snapshot {
	s := deps.Snapshot{Milestones: map[string][]string{}}
	names := sortedKeys(keysOfClusters(clusters))
	// A dependent is stored as a group held by each of its members, naming
	// the declaring cluster (SMF's import).
	imported := map[string][]deps.Group{}
	for _, name := range names {
		for _, g := range clusters[name].Dependents {
			for _, m := range g.Members {
				imported[m] = append(imported[m], deps.Group{Name: g.Name, Grouping: deps.Grouping(g.Grouping), RestartOn: deps.RestartOn(g.RestartOn), Members: []string{name}})
			}
		}
	}
	for _, name := range names {
		c := clusters[name]
		dc := deps.Cluster{Name: name, State: deps.Offline}
		for _, g := range c.DependsOn {
			dc.Groups = append(dc.Groups, deps.Group{Name: g.Name, Grouping: deps.Grouping(g.Grouping), RestartOn: deps.RestartOn(g.RestartOn), Members: g.Members})
		}
		dc.Groups = append(dc.Groups, imported[name]...)
		s.Clusters = append(s.Clusters, dc)
	}
	for n, m := range milestones {
		s.Milestones[n] = m.Clusters
	}
	return s
}

func keysOfClusters(m map[string]*Cluster) map[string]bool {
	out := map[string]bool{}
	for k := range m {
		out[k] = true
	}
	return out
}

// dependencyCycles refuses a cycle among the set's dependencies that the
// references did not already show: members written as names. It also
// refuses a dependent that would put on a cluster of the set a second
// group of a name it holds, as the agent would.
func (e *evaluator) dependencyCycles() hclv2.Diagnostics {
	for _, name := range sortedKeys(keysOfClusters(e.def.Clusters)) {
		c := e.def.Clusters[name]
		for _, g := range c.Dependents {
			for _, m := range g.Members {
				target, ok := e.def.Clusters[m]
				if !ok {
					continue
				}
				held := map[string]bool{}
				for _, own := range target.DependsOn {
					held[own.Name] = true
				}
				for _, other := range sortedKeys(keysOfClusters(e.def.Clusters)) {
					for _, og := range e.def.Clusters[other].Dependents {
						if other != name && og.Name == g.Name && slices.Contains(og.Members, m) {
							held[og.Name] = true
						}
					}
				}
				if held[g.Name] {
					rng := c.decl.fields["dependent."+g.Name+".members"]
					return hclv2.Diagnostics{{Severity: hclv2.DiagError, Summary: "Invalid dependent block",
						Detail:  fmt.Sprintf("dependent %q: cluster %q already holds a dependency group named %q; a dependent is stored as a group of each member, so rename one.", g.Name, m, g.Name),
						Subject: rng.Ptr()}}
				}
			}
		}
	}
	cycle := deps.Cycle(depSnapshot(e.def.Clusters, e.def.Milestones))
	if cycle == nil {
		return nil
	}
	rng := e.def.Clusters[cycle[0]].decl.rng
	return hclv2.Diagnostics{{Severity: hclv2.DiagError, Summary: "Dependency cycle",
		Detail:  fmt.Sprintf("These clusters' depends_on blocks wait on each other: %s. Cycles are allowed only through exclude_all groups.", strings.Join(cycle, " → ")),
		Subject: rng.Ptr()}}
}

// StartOrder is the order the set's clusters start in, by their
// depends_on blocks: waves whose clusters may start together, each after
// the waves before it. It is nil when no cluster declares dependencies.
func (s *Snapshot) StartOrder() [][]string {
	declared := false
	for _, c := range s.Clusters {
		declared = declared || len(c.DependsOn) > 0 || len(c.Dependents) > 0
	}
	if !declared {
		return nil
	}
	waves, err := deps.Order(depSnapshot(s.Clusters, s.Milestones))
	if err != nil {
		return nil
	}
	return waves
}

// dependsOnView is the groups a definition declares on a cluster, as the
// plan compares and shows them; nil when there are none.
func dependsOnView(gs []DependsOn) []any {
	var out []any
	for _, g := range gs {
		out = append(out, map[string]any{"name": g.Name, "grouping": g.Grouping, "restart_on": g.RestartOn, "members": g.Members})
	}
	return out
}

// dependentsView is dependsOnView for dependent blocks, groups sorted by
// name and members by name: the agent stores a dependent on each member,
// and shows them back in its own order.
func dependentsView(gs []DependsOn) []any {
	sorted := slices.Clone(gs)
	for i := range sorted {
		sorted[i].Members = slices.Sorted(slices.Values(sorted[i].Members))
	}
	slices.SortFunc(sorted, func(a, b DependsOn) int { return strings.Compare(a.Name, b.Name) })
	return dependsOnView(sorted)
}

func apiGroups(gs []api.DependencyGroup) []DependsOn {
	out := make([]DependsOn, 0, len(gs))
	for _, g := range gs {
		out = append(out, DependsOn{Name: g.Name, Grouping: g.Grouping, RestartOn: g.RestartOn, Members: g.Members})
	}
	return out
}

func dependsOnAPIView(gs []api.DependencyGroup) []any {
	var out []any
	for _, g := range gs {
		out = append(out, map[string]any{"name": g.Name, "grouping": g.Grouping, "restart_on": g.RestartOn, "members": g.Members})
	}
	return out
}

// milestoneChange compares a milestone with the agent's of that name.
func milestoneChange(r *remote, s *Snapshot, ref Ref) *Change {
	want := s.Milestones[ref.Name]
	have := r.milestones[ref.Name]
	if have == nil {
		return &Change{Action: Create, Ref: ref, Name: ref.Name}
	}
	if strings.Join(have.Clusters, "\x00") == strings.Join(want.Clusters, "\x00") {
		return nil
	}
	return &Change{Action: Update, Ref: ref, ID: have.ID, Name: ref.Name, Fields: []FieldChange{{Path: "clusters", Old: have.Clusters, New: want.Clusters}}}
}

// dependsOn declares a cluster's depends_on and dependent blocks on the
// agent, replacing what it declared before.
func (a *Applier) dependsOn(ctx context.Context, ref Ref, d *Cluster) error {
	req := api.DependenciesPut{Groups: []api.DependencyGroup{}, Dependents: []api.DependencyGroup{}}
	for _, g := range d.DependsOn {
		req.Groups = append(req.Groups, api.DependencyGroup{Name: g.Name, Grouping: g.Grouping, RestartOn: g.RestartOn, Members: g.Members})
	}
	for _, g := range d.Dependents {
		req.Dependents = append(req.Dependents, api.DependencyGroup{Name: g.Name, Grouping: g.Grouping, RestartOn: g.RestartOn, Members: g.Members})
	}
	groups := fmt.Sprintf("%d dependency groups", len(req.Groups))
	if len(req.Groups) == 1 {
		groups = "1 dependency group"
	}
	switch len(req.Dependents) {
	case 0:
		a.say("%s: declaring %s", ref, groups)
	case 1:
		a.say("%s: declaring %s and 1 dependent", ref, groups)
	default:
		a.say("%s: declaring %s and %d dependents", ref, groups, len(req.Dependents))
	}
	if _, err := a.Client.PutDependencies(ctx, d.Name, req); err != nil {
		return fmt.Errorf("declare the dependencies of %s: %w", ref, err)
	}
	return nil
}

// milestone creates or updates a milestone by name.
func (a *Applier) milestone(ctx context.Context, plan *Plan, step Change) error {
	m := plan.Desired.Milestones[step.Ref.Name]
	req := api.MilestoneCreate{Name: m.Name, Clusters: m.Clusters}
	if step.Action == Create {
		a.say("%s: creating", step.Ref)
		if _, err := a.Client.CreateMilestone(ctx, req); err != nil {
			return fmt.Errorf("create %s: %w", step.Ref, err)
		}
		return nil
	}
	a.say("%s: updating clusters", step.Ref)
	if req.Clusters == nil {
		req.Clusters = []string{}
	}
	if _, err := a.Client.UpdateMilestone(ctx, step.ID, api.MilestoneCreate{Clusters: req.Clusters}); err != nil {
		return fmt.Errorf("update %s: %w", step.Ref, err)
	}
	return nil
}

// declarations schedules the PUT of each cluster's dependencies in an
// apply: a cluster's own groups name clusters created before it, but its
// dependents name clusters created after it (they wait on it), and the
// agent refuses a member that does not exist yet. So a cluster is declared
// once its own step and the steps creating its dependents' members ran.
type declarations struct {
	desired  map[string]*Cluster
	order    []string        // clusters to declare, in the plan's order
	creating map[string]bool // clusters this apply creates, not yet created
}

func newDeclarations(plan *Plan) *declarations {
	d := &declarations{desired: plan.Desired.Clusters, creating: map[string]bool{}}
	replaced := map[string]bool{}
	for _, step := range plan.Changes {
		if step.Ref.Kind == "cluster" && step.Action == Replace {
			replaced[step.Ref.Name] = true
		}
	}
	for _, step := range plan.Changes {
		if step.Ref.Kind != "cluster" || step.Action == Delete {
			continue
		}
		c := plan.Desired.Clusters[step.Ref.Name]
		declare := false
		switch step.Action {
		case Create, Replace:
			d.creating[step.Ref.Name] = true
			declare = len(c.DependsOn) > 0 || len(c.Dependents) > 0
		case Update:
			for _, f := range step.Fields {
				declare = declare || f.Path == "depends_on" || f.Path == "dependents"
			}
		}
		if declare {
			d.order = append(d.order, step.Ref.Name)
		}
	}
	// A replaced cluster loses the groups other clusters' dependents put
	// on it: those clusters declare them again.
	for _, name := range sortedKeys(keysOfClusters(plan.Desired.Clusters)) {
		if slices.Contains(d.order, name) {
			continue
		}
		for _, g := range plan.Desired.Clusters[name].Dependents {
			if slices.ContainsFunc(g.Members, func(m string) bool { return replaced[m] }) {
				d.order = append(d.order, name)
				break
			}
		}
	}
	return d
}

// done records a cluster's step as run and declares every cluster whose
// turn it now is.
func (d *declarations) done(ctx context.Context, a *Applier, name string) error {
	delete(d.creating, name)
	var left []string
	for _, n := range d.order {
		if !d.ready(n) {
			left = append(left, n)
			continue
		}
		if err := a.dependsOn(ctx, Ref{Kind: "cluster", Name: n}, d.desired[n]); err != nil {
			return err
		}
	}
	d.order = left
	return nil
}

func (d *declarations) ready(name string) bool {
	if d.creating[name] {
		return false
	}
	for _, g := range d.desired[name].Dependents {
		for _, m := range g.Members {
			if d.creating[m] {
				return false
			}
		}
	}
	return true
}
