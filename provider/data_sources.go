package provider

import (
	"context"
	"fmt"
	"net/http"
	"net/url"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/datasource"
	"github.com/hashicorp/terraform-plugin-framework/datasource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/grovehq/grove/api"
)

// clusterDataSource is data.grove_cluster.
type clusterDataSource struct{ client *api.Client }

type clusterDataModel struct {
	Ident           types.String `tfsdk:"id_or_name"`
	ID              types.String `tfsdk:"id"`
	Name            types.String `tfsdk:"name"`
	ProfileID       types.String `tfsdk:"profile_id"`
	DesiredCapacity types.Int64  `tfsdk:"desired_capacity"`
	MinSize         types.Int64  `tfsdk:"min_size"`
	MaxSize         types.Int64  `tfsdk:"max_size"`
	Status          types.String `tfsdk:"status"`
	StatusReason    types.String `tfsdk:"status_reason"`
	NodeIDs         types.List   `tfsdk:"node_ids"`
}

func (d *clusterDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
}

func (d *clusterDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{Description: "Reads a cluster by id, name or short id.", Attributes: map[string]schema.Attribute{
		"id_or_name":       schema.StringAttribute{Required: true, Description: "The cluster's id, name or short id."},
		"id":               schema.StringAttribute{Computed: true, Description: "The cluster's id."},
		"name":             schema.StringAttribute{Computed: true, Description: "The cluster's name."},
		"profile_id":       schema.StringAttribute{Computed: true, Description: "The profile's id."},
		"desired_capacity": schema.Int64Attribute{Computed: true, Description: "The desired number of nodes."},
		"min_size":         schema.Int64Attribute{Computed: true, Description: "The least nodes."},
		"max_size":         schema.Int64Attribute{Computed: true, Description: "The most nodes (-1 unbounded)."},
		"status":           schema.StringAttribute{Computed: true, Description: "The cluster's status."},
		"status_reason":    schema.StringAttribute{Computed: true, Description: "Why it has its status."},
		"node_ids":         schema.ListAttribute{ElementType: types.StringType, Computed: true, Description: "The nodes' ids."},
	}}
}

func (d *clusterDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *clusterDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m clusterDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	cl, err := d.client.GetCluster(ctx, m.Ident.ValueString())
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the cluster", apiError(err))
		return
	}
	m.ID, m.Name, m.ProfileID = types.StringValue(cl.ID), types.StringValue(cl.Name), types.StringValue(cl.ProfileID)
	m.DesiredCapacity, m.MinSize, m.MaxSize = types.Int64Value(int64(cl.DesiredCapacity)), types.Int64Value(int64(cl.MinSize)), types.Int64Value(int64(cl.MaxSize))
	m.Status, m.StatusReason = types.StringValue(cl.Status), types.StringValue(cl.StatusReason)
	nodeIDs, err := d.client.ClusterNodeIDs(ctx, cl)
	if err != nil {
		resp.Diagnostics.AddError("Cannot read the cluster's nodes", apiError(err))
		return
	}
	ids := make([]attr.Value, len(nodeIDs))
	for i, id := range nodeIDs {
		ids[i] = types.StringValue(id)
	}
	m.NodeIDs = types.ListValueMust(types.StringType, ids)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// specDataSource is data.grove_profile or data.grove_policy.
type specDataSource struct {
	kind   string
	client *api.Client
}

type specDataModel struct {
	Ident      types.String         `tfsdk:"id_or_name"`
	ID         types.String         `tfsdk:"id"`
	Name       types.String         `tfsdk:"name"`
	Type       types.String         `tfsdk:"type"`
	Version    types.String         `tfsdk:"version"`
	Properties jsontypes.Normalized `tfsdk:"properties"`
}

func (d *specDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.kind
}

func (d *specDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{Description: fmt.Sprintf("Reads a %s by id, name or short id.", d.kind), Attributes: map[string]schema.Attribute{
		"id_or_name": schema.StringAttribute{Required: true, Description: "The " + d.kind + "'s id, name or short id."},
		"id":         schema.StringAttribute{Computed: true, Description: "Its id."},
		"name":       schema.StringAttribute{Computed: true, Description: "Its name."},
		"type":       schema.StringAttribute{Computed: true, Description: "Its type."},
		"version":    schema.StringAttribute{Computed: true, Description: "Its type's version."},
		"properties": schema.StringAttribute{Computed: true, Sensitive: true, CustomType: jsontypes.NormalizedType{}, Description: "Its properties as JSON; sensitive values show as \"(sensitive)\"."},
	}}
}

func (d *specDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *specDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m specDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	var obj struct {
		ID   string         `json:"id"`
		Name string         `json:"name"`
		Spec map[string]any `json:"spec"`
	}
	found, err := get(ctx, d.client, d.kind, m.Ident.ValueString(), &obj)
	if err != nil || !found {
		msg := fmt.Sprintf("No %s has the id or name %q.", d.kind, m.Ident.ValueString())
		if err != nil {
			msg = apiError(err)
		}
		resp.Diagnostics.AddError("Cannot read the "+d.kind, msg)
		return
	}
	m.ID, m.Name = types.StringValue(obj.ID), types.StringValue(obj.Name)
	m.Type, m.Version = types.StringValue(fmt.Sprint(obj.Spec["type"])), types.StringValue(fmt.Sprint(obj.Spec["version"]))
	m.Properties = jsontypes.NewNormalizedValue(toJSON(obj.Spec["properties"]))
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// nodesDataSource is data.grove_nodes.
type nodesDataSource struct{ client *api.Client }

var nodeAttrTypes = map[string]attr.Type{"id": types.StringType, "name": types.StringType, "index": types.Int64Type,
	"status": types.StringType, "cluster_id": types.StringType, "address": types.StringType}

type nodesDataModel struct {
	ClusterID types.String `tfsdk:"cluster_id"`
	Status    types.String `tfsdk:"status"`
	Nodes     types.List   `tfsdk:"nodes"`
}

func (d *nodesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_nodes"
}

func (d *nodesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{Description: "Lists nodes, filtered by cluster and status.", Attributes: map[string]schema.Attribute{
		"cluster_id": schema.StringAttribute{Optional: true, Description: "Only nodes of this cluster (id or name)."},
		"status":     schema.StringAttribute{Optional: true, Description: "Only nodes in this status, such as ACTIVE."},
		"nodes": schema.ListAttribute{Computed: true, ElementType: types.ObjectType{AttrTypes: nodeAttrTypes},
			Description: "The nodes, by index: id, name, index, status, cluster_id and address."},
	}}
}

func (d *nodesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *nodesDataSource) Read(ctx context.Context, req datasource.ReadRequest, resp *datasource.ReadResponse) {
	var m nodesDataModel
	resp.Diagnostics.Append(req.Config.Get(ctx, &m)...)
	if resp.Diagnostics.HasError() {
		return
	}
	q := url.Values{"sort": {"index"}}
	if v := m.ClusterID.ValueString(); v != "" {
		q.Set("cluster_id", v)
	}
	if v := m.Status.ValueString(); v != "" {
		q.Set("status", v)
	}
	nodes, err := d.client.ListNodes(ctx, q)
	if err != nil {
		resp.Diagnostics.AddError("Cannot list nodes", apiError(err))
		return
	}
	elems := make([]attr.Value, len(nodes))
	for i, n := range nodes {
		addr, _ := n.Data["address"].(string)
		elems[i] = types.ObjectValueMust(nodeAttrTypes, map[string]attr.Value{"id": types.StringValue(n.ID), "name": types.StringValue(n.Name),
			"index": types.Int64Value(int64(n.Index)), "status": types.StringValue(n.Status), "cluster_id": types.StringValue(n.ClusterID),
			"address": types.StringValue(addr)})
	}
	m.Nodes = types.ListValueMust(types.ObjectType{AttrTypes: nodeAttrTypes}, elems)
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}

// typesDataSource is data.grove_profile_types or data.grove_policy_types.
type typesDataSource struct {
	kind   string
	client *api.Client
}

var typeAttrTypes = map[string]attr.Type{"name": types.StringType, "version": types.StringType}

type typesDataModel struct {
	Types types.List `tfsdk:"types"`
}

func (d *typesDataSource) Metadata(_ context.Context, req datasource.MetadataRequest, resp *datasource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + d.kind + "_types"
}

func (d *typesDataSource) Schema(_ context.Context, _ datasource.SchemaRequest, resp *datasource.SchemaResponse) {
	resp.Schema = schema.Schema{Description: "Lists the " + d.kind + " types the agent's plugins provide.", Attributes: map[string]schema.Attribute{
		"types": schema.ListAttribute{Computed: true, ElementType: types.ObjectType{AttrTypes: typeAttrTypes}, Description: "Each type and version."},
	}}
}

func (d *typesDataSource) Configure(_ context.Context, req datasource.ConfigureRequest, resp *datasource.ConfigureResponse) {
	d.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (d *typesDataSource) Read(ctx context.Context, _ datasource.ReadRequest, resp *datasource.ReadResponse) {
	var out map[string][]api.TypeSummary
	if _, err := d.client.Do(ctx, http.MethodGet, "/v1/"+d.kind+"-types", nil, nil, &out); err != nil {
		resp.Diagnostics.AddError("Cannot list "+d.kind+" types", apiError(err))
		return
	}
	var elems []attr.Value
	for _, t := range out[d.kind+"_types"] {
		elems = append(elems, types.ObjectValueMust(typeAttrTypes, map[string]attr.Value{"name": types.StringValue(t.Name), "version": types.StringValue(t.Version)}))
	}
	m := typesDataModel{Types: types.ListValueMust(types.ObjectType{AttrTypes: typeAttrTypes}, elems)}
	resp.Diagnostics.Append(resp.State.Set(ctx, &m)...)
}
