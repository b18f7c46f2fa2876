package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/grovehq/grove/api"
)

// attachmentResource is grove_cluster_policy_attachment: a policy bound to
// a cluster.
type attachmentResource struct{ client *api.Client }

type attachmentModel struct {
	ID        types.String   `tfsdk:"id"`
	ClusterID types.String   `tfsdk:"cluster_id"`
	PolicyID  types.String   `tfsdk:"policy_id"`
	Enabled   types.Bool     `tfsdk:"enabled"`
	Priority  types.Int64    `tfsdk:"priority"`
	Timeouts  timeouts.Value `tfsdk:"timeouts"`
}

func (r *attachmentResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster_policy_attachment"
}

func (r *attachmentResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	replace := []planmodifier.String{stringplanmodifier.RequiresReplace()}
	resp.Schema = schema.Schema{
		Description: "Binds a policy to a cluster. A cluster takes at most one policy of a type.",
		Attributes: map[string]schema.Attribute{
			"id":         schema.StringAttribute{Computed: true, Description: "CLUSTER_ID/POLICY_ID.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"cluster_id": schema.StringAttribute{Required: true, Description: "The cluster's id.", PlanModifiers: replace},
			"policy_id":  schema.StringAttribute{Required: true, Description: "The policy's id.", PlanModifiers: replace},
			"enabled":    schema.BoolAttribute{Optional: true, Computed: true, Description: "Whether the policy is checked (default true). Updated in place."},
			"priority": schema.Int64Attribute{Optional: true, Computed: true, Description: "Check order, lower first (default: the policy type's). Updated in place.",
				Validators:    []validator.Int64{count},
				PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}},
		},
		Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})},
	}
}

func (r *attachmentResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *attachmentResource) act(ctx context.Context, cluster, action string, params map[string]any, timeout time.Duration) error {
	res, err := r.client.Do(ctx, http.MethodPost, "/v1/clusters/"+url.PathEscape(cluster)+"/actions", nil, map[string]any{action: params}, nil)
	if err != nil {
		return fmt.Errorf("%s", apiError(err))
	}
	return wait(ctx, r.client, res, timeout)
}

func (r *attachmentResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan attachmentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	params := map[string]any{"policy_id": plan.PolicyID.ValueString()}
	if !plan.Enabled.IsNull() && !plan.Enabled.IsUnknown() {
		params["enabled"] = plan.Enabled.ValueBool()
	}
	if !plan.Priority.IsNull() && !plan.Priority.IsUnknown() {
		params["priority"] = plan.Priority.ValueInt64()
	}
	if err := r.act(ctx, plan.ClusterID.ValueString(), "policy_attach", params, timeout); err != nil {
		resp.Diagnostics.AddError("Cannot attach the policy", err.Error())
		return
	}
	plan.ID = types.StringValue(plan.ClusterID.ValueString() + "/" + plan.PolicyID.ValueString())
	r.read(ctx, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *attachmentResource) read(ctx context.Context, m *attachmentModel, diags *diag.Diagnostics) bool {
	cluster, policy, ok := strings.Cut(m.ID.ValueString(), "/")
	if !ok {
		diags.AddError("Invalid attachment id", fmt.Sprintf("%q is not CLUSTER_ID/POLICY_ID.", m.ID.ValueString()))
		return false
	}
	var body struct {
		Binding api.ClusterPolicy `json:"cluster_policy"`
	}
	_, err := r.client.Do(ctx, http.MethodGet, "/v1/clusters/"+url.PathEscape(cluster)+"/policies/"+url.PathEscape(policy), nil, nil, &body)
	if api.IsNotFound(err) {
		return false
	}
	if err != nil {
		diags.AddError("Cannot read the attachment", apiError(err))
		return false
	}
	m.ClusterID = types.StringValue(body.Binding.ClusterID)
	m.PolicyID = types.StringValue(body.Binding.PolicyID)
	m.ID = types.StringValue(body.Binding.ClusterID + "/" + body.Binding.PolicyID)
	m.Enabled = types.BoolValue(body.Binding.Enabled)
	m.Priority = types.Int64Value(int64(body.Binding.Priority))
	return true
}

func (r *attachmentResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readState(ctx, req, resp, r.read)
}

func (r *attachmentResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state attachmentModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	params := map[string]any{"policy_id": state.PolicyID.ValueString()}
	if !plan.Enabled.IsUnknown() && !plan.Enabled.IsNull() {
		params["enabled"] = plan.Enabled.ValueBool()
	}
	if !plan.Priority.IsUnknown() && !plan.Priority.IsNull() {
		params["priority"] = plan.Priority.ValueInt64()
	}
	if err := r.act(ctx, state.ClusterID.ValueString(), "policy_update", params, timeout); err != nil {
		resp.Diagnostics.AddError("Cannot update the attachment", err.Error())
		return
	}
	plan.ID = state.ID
	r.read(ctx, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *attachmentResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state attachmentModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	err := r.act(ctx, state.ClusterID.ValueString(), "policy_detach", map[string]any{"policy_id": state.PolicyID.ValueString()}, timeout)
	if err != nil && !strings.Contains(err.Error(), "not attached") && !strings.Contains(err.Error(), "could not be found") {
		resp.Diagnostics.AddError("Cannot detach the policy", err.Error())
	} else if err != nil {
		tflog.Debug(ctx, "The policy is no longer attached: counted as detached", map[string]any{"reason": err.Error()})
	}
}

// ImportState takes CLUSTER/POLICY, each an id or a name.
func (r *attachmentResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	cluster, policy, ok := strings.Cut(req.ID, "/")
	if !ok {
		resp.Diagnostics.AddError("Invalid import id", "Import an attachment as CLUSTER/POLICY (ids or names).")
		return
	}
	// Each part is looked up on its own, so that the error names the one
	// missing, or says why the agent did not answer (a refused token is
	// not a missing cluster).
	ids := map[string]string{}
	for _, part := range []struct{ kind, ident string }{{"cluster", cluster}, {"policy", policy}} {
		var obj struct {
			ID string `json:"id"`
		}
		found, err := get(ctx, r.client, part.kind, part.ident, &obj)
		if err != nil {
			resp.Diagnostics.AddError("Cannot import the attachment", fmt.Sprintf("Reading the %s %q failed: %s", part.kind, part.ident, apiError(err)))
			return
		}
		if !found {
			resp.Diagnostics.AddError("Cannot import the attachment", fmt.Sprintf("No %s has the id or name %q.", part.kind, part.ident))
			return
		}
		ids[part.kind] = obj.ID
	}
	_, err := r.client.Do(ctx, http.MethodGet, "/v1/clusters/"+url.PathEscape(ids["cluster"])+"/policies/"+url.PathEscape(ids["policy"]), nil, nil, nil)
	if api.IsNotFound(err) {
		resp.Diagnostics.AddError("Cannot import the attachment", fmt.Sprintf("The policy %q is not attached to the cluster %q.", policy, cluster))
		return
	}
	if err != nil {
		resp.Diagnostics.AddError("Cannot import the attachment", fmt.Sprintf("Reading the attachment of the policy %q to the cluster %q failed: %s", policy, cluster, apiError(err)))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), ids["cluster"]+"/"+ids["policy"])...)
}

// nodeResource is grove_node: one node, orphan or in a cluster.
type nodeResource struct{ client *api.Client }

type nodeModel struct {
	ID         types.String         `tfsdk:"id"`
	Name       types.String         `tfsdk:"name"`
	ProfileID  types.String         `tfsdk:"profile_id"`
	ClusterID  types.String         `tfsdk:"cluster_id"`
	Role       types.String         `tfsdk:"role"`
	Index      types.Int64          `tfsdk:"index"`
	Status     types.String         `tfsdk:"status"`
	PhysicalID types.String         `tfsdk:"physical_id"`
	Data       jsontypes.Normalized `tfsdk:"data"`
	Timeouts   timeouts.Value       `tfsdk:"timeouts"`
}

func (r *nodeResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_node"
}

func (r *nodeResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	stable := []planmodifier.String{stringplanmodifier.UseStateForUnknown()}
	resp.Schema = schema.Schema{
		Description: "A single Grove node, made from a profile; in a cluster or on its own.",
		Attributes: map[string]schema.Attribute{
			"id":         schema.StringAttribute{Computed: true, Description: "The node's id.", PlanModifiers: stable},
			"name":       schema.StringAttribute{Required: true, Description: "The node's name (a cluster names its nodes itself). Updated in place.", Validators: nameRule},
			"profile_id": schema.StringAttribute{Required: true, Description: "The profile's id; another profile of the same type updates the node in place."},
			"cluster_id": schema.StringAttribute{Optional: true, Description: "The cluster the node joins at creation.",
				PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
			"role":   schema.StringAttribute{Optional: true, Computed: true, Description: "A free role.", PlanModifiers: stable},
			"index":  schema.Int64Attribute{Computed: true, Description: "The node's index in its cluster (-1 when orphan).", PlanModifiers: []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}},
			"status": schema.StringAttribute{Computed: true, Description: "The node's status."},
			"physical_id": schema.StringAttribute{Computed: true, Description: "What the driver calls the node; another profile may change it.",
				PlanModifiers: []planmodifier.String{sameProfileSameValue{}}},
			"data": schema.StringAttribute{Computed: true, CustomType: jsontypes.NormalizedType{}, Description: "The node's data as JSON (address, port …)."},
		},
		Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})},
	}
}

func (r *nodeResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

func (r *nodeResource) read(ctx context.Context, m *nodeModel, diags *diag.Diagnostics) bool {
	n, err := r.client.GetNode(ctx, m.ID.ValueString())
	if api.IsNotFound(err) {
		return false
	}
	if err != nil {
		diags.AddError("Cannot read the node", apiError(err))
		return false
	}
	if n.ClusterID == "" {
		// An orphan node keeps its configured name; a cluster renames its nodes.
		m.Name = types.StringValue(n.Name)
	}
	m.ProfileID = types.StringValue(n.ProfileID)
	if n.ClusterID != "" || !m.ClusterID.IsNull() {
		m.ClusterID = types.StringValue(n.ClusterID)
	}
	m.Role = types.StringValue(n.Role)
	m.Index = types.Int64Value(int64(n.Index))
	m.Status = types.StringValue(n.Status)
	m.PhysicalID = types.StringValue(n.PhysicalID)
	b, _ := json.Marshal(n.Data)
	m.Data = jsontypes.NewNormalizedValue(string(b))
	return true
}

func (r *nodeResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan nodeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	body := map[string]any{"name": plan.Name.ValueString(), "profile_id": plan.ProfileID.ValueString(), "role": plan.Role.ValueString()}
	if !plan.ClusterID.IsNull() {
		body["cluster_id"] = plan.ClusterID.ValueString()
	}
	var out struct {
		Node api.Node `json:"node"`
	}
	res, err := r.client.Do(ctx, http.MethodPost, "/v1/nodes", nil, map[string]any{"node": body}, &out)
	if err != nil {
		resp.Diagnostics.AddError("Cannot create the node", apiError(err))
		return
	}
	plan.ID = types.StringValue(out.Node.ID)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err := wait(ctx, r.client, res, timeout); err != nil {
		resp.Diagnostics.AddError("The node's creation failed", err.Error())
	}
	name := plan.Name
	r.read(ctx, &plan, &resp.Diagnostics)
	plan.Name = name
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *nodeResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readState(ctx, req, resp, r.read)
}

func (r *nodeResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state nodeModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	body := map[string]any{}
	if !plan.Name.Equal(state.Name) && state.ClusterID.ValueString() == "" {
		body["name"] = plan.Name.ValueString()
	}
	if !plan.ProfileID.Equal(state.ProfileID) {
		body["profile_id"] = plan.ProfileID.ValueString()
	}
	if !plan.Role.IsUnknown() && !plan.Role.Equal(state.Role) {
		body["role"] = plan.Role.ValueString()
	}
	if len(body) > 0 {
		res, err := r.client.Do(ctx, http.MethodPatch, "/v1/nodes/"+url.PathEscape(state.ID.ValueString()), nil, map[string]any{"node": body}, nil)
		if err != nil {
			resp.Diagnostics.AddError("Cannot update the node", apiError(err))
			return
		}
		if err := wait(ctx, r.client, res, timeout); err != nil {
			resp.Diagnostics.AddError("The node's update failed", err.Error())
		}
	}
	plan.ID = state.ID
	name := plan.Name
	r.read(ctx, &plan, &resp.Diagnostics)
	plan.Name = name
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *nodeResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state nodeModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, 10*time.Minute)
	resp.Diagnostics.Append(d...)
	deleteObject(ctx, r.client, "node", state.ID.ValueString(), timeout, &resp.Diagnostics)
}

func (r *nodeResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByIDOrName(ctx, r.client, "node", req, resp)
}

// sameProfileSameValue keeps the state's value in the plan unless
// profile_id changes: moving a node onto another profile may recreate what
// the driver calls it (a local.process node restarts with a new pid).
type sameProfileSameValue struct{}

func (sameProfileSameValue) Description(context.Context) string {
	return "Unchanged unless profile_id changes."
}

func (m sameProfileSameValue) MarkdownDescription(ctx context.Context) string {
	return m.Description(ctx)
}

func (sameProfileSameValue) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || !req.PlanValue.IsUnknown() || req.ConfigValue.IsUnknown() {
		return
	}
	var planned, current types.String
	resp.Diagnostics.Append(req.Plan.GetAttribute(ctx, path.Root("profile_id"), &planned)...)
	resp.Diagnostics.Append(req.State.GetAttribute(ctx, path.Root("profile_id"), &current)...)
	if planned.Equal(current) {
		tflog.Debug(ctx, "profile_id is unchanged: the plan keeps "+req.Path.String()+" from the state")
		resp.PlanValue = req.StateValue
	}
}
