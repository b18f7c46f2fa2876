package hcl

import (
	"context"
	"fmt"
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

func (e *evaluator) decodeDependsOn(c *Cluster, sb *hclv2.Block, attrs *hclv2.BodyContent) (*DependsOn, hclv2.Diagnostics) {
	var diags hclv2.Diagnostics
	g := &DependsOn{Name: sb.Labels[0], RestartOn: string(deps.None)}
	bad := func(rng hclv2.Range, format string, args ...any) {
		diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid depends_on block",
			Detail: fmt.Sprintf(format, args...), Subject: rng.Ptr()})
	}
	for _, other := range c.DependsOn {
		if other.Name == g.Name {
			bad(sb.LabelRanges[0], "depends_on %q is declared twice in cluster %q; group names are unique within a cluster.", g.Name, c.Name)
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
		// Point at the attribute the rule is about.
		rng := sb.DefRange
		msg := err.Error()
		switch {
		case strings.Contains(msg, ": grouping "):
			rng = attrs.Attributes["grouping"].Expr.Range()
		case strings.Contains(msg, ": restart_on ") && attrs.Attributes["restart_on"] != nil:
			rng = attrs.Attributes["restart_on"].Expr.Range()
		case strings.Contains(msg, ": member "):
			rng = a.Expr.Range()
		}
		bad(rng, "%s", msg)
		return nil, diags
	}
	for _, m := range g.Members {
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
	for _, name := range sortedKeys(keysOfClusters(clusters)) {
		c := clusters[name]
		dc := deps.Cluster{Name: name, State: deps.Offline}
		for _, g := range c.DependsOn {
			dc.Groups = append(dc.Groups, deps.Group{Name: g.Name, Grouping: deps.Grouping(g.Grouping), RestartOn: deps.RestartOn(g.RestartOn), Members: g.Members})
		}
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
// references did not already show: members written as names.
func (e *evaluator) dependencyCycles() hclv2.Diagnostics {
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
		declared = declared || len(c.DependsOn) > 0
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

// dependsOn declares a cluster's depends_on blocks on the agent, replacing
// what it declared before.
func (a *Applier) dependsOn(ctx context.Context, ref Ref, d *Cluster) error {
	req := api.DependenciesPut{Groups: []api.DependencyGroup{}}
	for _, g := range d.DependsOn {
		req.Groups = append(req.Groups, api.DependencyGroup{Name: g.Name, Grouping: g.Grouping, RestartOn: g.RestartOn, Members: g.Members})
	}
	a.say("%s: declaring %d dependency groups", ref, len(req.Groups))
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
