package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringdefault"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/grovehq/grove/api"
)

// grove_cluster's dependency_groups (docs/dependencies.md): the groups the
// cluster declares, put to /v1/clusters/{id}/dependencies after the
// cluster exists. Terraform reserves depends_on, hence the name.

var depGroupTypes = map[string]attr.Type{"grouping": types.StringType, "restart_on": types.StringType, "members": types.ListType{ElemType: types.StringType}}

func dependencyGroupsSchema() schema.Attribute {
	return schema.MapNestedAttribute{Optional: true,
		Description: "Dependency groups, by name, as Solaris SMF has them: the cluster starts when every group is satisfied and stops when a member's stop reaches it through restart_on.",
		NestedObject: schema.NestedAttributeObject{Attributes: map[string]schema.Attribute{
			"grouping": schema.StringAttribute{Required: true, Description: "require_all, require_any, optional_all or exclude_all.",
				Validators: []validator.String{oneOf(api.Groupings)}},
			"restart_on": schema.StringAttribute{Optional: true, Computed: true, Default: stringdefault.StaticString("none"),
				Description: "none (the default), error, restart or refresh.", Validators: []validator.String{oneOf(api.RestartOn)}},
			"members": schema.ListAttribute{ElementType: types.StringType, Required: true, Validators: names,
				Description: "Clusters (names or ids), \"milestone:NAME\" or \"path:/absolute/path\"."},
		}},
	}
}

// groupAttrs reads one group object of the map into plain values.
func groupAttrs(v attr.Value) map[string]any {
	out := map[string]any{}
	if o, ok := v.(types.Object); ok && !o.IsNull() && !o.IsUnknown() {
		for k, a := range o.Attributes() {
			out[k] = goValue(a)
		}
	}
	return out
}

// putDependencyGroups declares the model's groups on the cluster.
func (r *clusterResource) putDependencyGroups(ctx context.Context, m *clusterModel, diags *diag.Diagnostics) {
	req := api.DependenciesPut{Groups: []api.DependencyGroup{}}
	if !m.DependencyGroups.IsNull() && !m.DependencyGroups.IsUnknown() {
		for name, v := range m.DependencyGroups.Elements() {
			g := groupAttrs(v)
			dg := api.DependencyGroup{Name: name, Members: []string{}}
			dg.Grouping, _ = g["grouping"].(string)
			dg.RestartOn, _ = g["restart_on"].(string)
			ms, _ := g["members"].([]any)
			for _, x := range ms {
				s, _ := x.(string)
				dg.Members = append(dg.Members, s)
			}
			req.Groups = append(req.Groups, dg)
		}
	}
	if _, err := r.client.PutDependencies(ctx, m.ID.ValueString(), req); err != nil {
		diags.AddError("Cannot declare the cluster's dependency groups", apiError(err))
	}
}

// readDependencyGroups copies the groups the cluster declared into the
// model. A member the configuration gives as a cluster id is kept as
// written when the agent shows that cluster's name in its place.
func (r *clusterResource) readDependencyGroups(ctx context.Context, m *clusterModel, clusterName string, diags *diag.Diagnostics) {
	d, err := r.client.GetDependencies(ctx, m.ID.ValueString())
	if err != nil {
		diags.AddError("Cannot read the cluster's dependency groups", apiError(err))
		return
	}
	written := map[string][]string{}
	if !m.DependencyGroups.IsNull() && !m.DependencyGroups.IsUnknown() {
		for name, v := range m.DependencyGroups.Elements() {
			g := groupAttrs(v)
			ms, _ := g["members"].([]any)
			for _, x := range ms {
				s, _ := x.(string)
				written[name] = append(written[name], s)
			}
		}
	}
	elems := map[string]attr.Value{}
	for _, g := range d.Groups {
		if g.DeclaredBy != clusterName {
			continue // declared by another cluster, as its dependent
		}
		members := make([]attr.Value, len(g.Members))
		for i, shown := range g.Members {
			if w := written[g.Name]; i < len(w) && w[i] != shown {
				if cl, err := r.client.GetCluster(ctx, w[i]); err == nil && cl.Name == shown {
					shown = w[i]
				}
			}
			members[i] = types.StringValue(shown)
		}
		elems[g.Name] = types.ObjectValueMust(depGroupTypes, map[string]attr.Value{
			"grouping": types.StringValue(g.Grouping), "restart_on": types.StringValue(g.RestartOn),
			"members": types.ListValueMust(types.StringType, members)})
	}
	if len(elems) == 0 && m.DependencyGroups.IsNull() {
		m.DependencyGroups = types.MapNull(types.ObjectType{AttrTypes: depGroupTypes})
		return
	}
	m.DependencyGroups = types.MapValueMust(types.ObjectType{AttrTypes: depGroupTypes}, elems)
}
