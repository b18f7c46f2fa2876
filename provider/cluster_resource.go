package provider

import (
	"context"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework-timeouts/resource/timeouts"
	"github.com/hashicorp/terraform-plugin-framework-validators/float64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
	"github.com/hashicorp/terraform-plugin-framework-validators/listvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/mapvalidator"
	"github.com/hashicorp/terraform-plugin-framework-validators/stringvalidator"
	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/int64planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/mapplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/planmodifier"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema/stringplanmodifier"
	"github.com/hashicorp/terraform-plugin-framework/schema/validator"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-framework/types/basetypes"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/grovehq/grove/api"
)

// clusterResource is grove_cluster.
type clusterResource struct{ client *api.Client }

type clusterModel struct {
	ID               types.String   `tfsdk:"id"`
	Name             types.String   `tfsdk:"name"`
	ProfileID        types.String   `tfsdk:"profile_id"`
	DesiredCapacity  types.Int64    `tfsdk:"desired_capacity"`
	MinSize          types.Int64    `tfsdk:"min_size"`
	MaxSize          types.Int64    `tfsdk:"max_size"`
	Timeout          types.Int64    `tfsdk:"timeout"`
	Metadata         types.Map      `tfsdk:"metadata"`
	Config           types.Map      `tfsdk:"config"`
	Restart          types.Object   `tfsdk:"restart"`
	Update           types.Object   `tfsdk:"update"`
	Placement        types.Object   `tfsdk:"placement"`
	Failover         types.Object   `tfsdk:"failover"`
	HardAffinity     types.List     `tfsdk:"hard_affinity"`
	HardAntiAffinity types.List     `tfsdk:"hard_anti_affinity"`
	SoftAffinity     types.List     `tfsdk:"soft_affinity"`
	SoftAntiAffinity types.List     `tfsdk:"soft_anti_affinity"`
	Dependency       types.Map      `tfsdk:"dependency"`
	DependencyGroups types.Map      `tfsdk:"dependency_groups"`
	Status           types.String   `tfsdk:"status"`
	StatusReason     types.String   `tfsdk:"status_reason"`
	NodeIDs          types.List     `tfsdk:"node_ids"`
	Timeouts         timeouts.Value `tfsdk:"timeouts"`
}

var (
	restartTypes = map[string]attr.Type{"condition": types.StringType, "delay": types.StringType, "max_attempts": types.Int64Type, "window": types.StringType}
	updateTypes  = map[string]attr.Type{"parallelism": types.Int64Type, "delay": types.StringType, "failure_action": types.StringType,
		"monitor": types.StringType, "max_failure_ratio": types.Float64Type, "order": types.StringType}
	placementTypes = map[string]attr.Type{"policy": types.StringType, "hosts": types.ListType{ElemType: types.StringType}}
	failoverTypes  = map[string]attr.Type{"topology": types.StringType, "orchestrate": types.StringType, "flex_min": types.Int64Type,
		"flex_max": types.Int64Type, "flex_target": types.Int64Type, "ready_period": types.StringType,
		"maintenance_grace_period": types.StringType, "rejoin_grace_period": types.StringType}
	dependencyTypes = map[string]attr.Type{"grouping": types.StringType, "restart_on": types.StringType, "clusters": types.ListType{ElemType: types.StringType}}
	affinityKeys    = []string{"hard_affinity", "hard_anti_affinity", "soft_affinity", "soft_anti_affinity"}
)

func (r *clusterResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_cluster"
}

func optStr(desc string, v ...validator.String) schema.StringAttribute {
	return schema.StringAttribute{Optional: true, Description: desc, Validators: v}
}

// oneOf is the plan-time check of a setting with a fixed set of values:
// the same sets api.ValidateSettings holds the agent's submit to.
func oneOf(values []string) validator.String { return stringvalidator.OneOf(values...) }

// names checks a list of cluster or host names as api.ValidateSettings
// does: each a non-empty string.
var names = []validator.List{listvalidator.ValueStringsAre(stringvalidator.LengthAtLeast(1))}

// nameRule holds an object's name to the agent's rule.
var nameRule = []validator.String{stringvalidator.RegexMatches(regexp.MustCompile(api.NamePattern),
	"must be 1 to 255 characters of letters, digits, '.', '_', '~' and '-'"),
	stringvalidator.NoneOf(".", "..")}

// notSetting refuses a config key the agent keeps for an orchestration
// setting (grove.restart, …): such a setting is an object, which a map of
// strings cannot hold, and an unknown grove.* key is refused by
// api.ValidateSettings. RE2 has no negative lookahead, hence the spelled-out
// "does not start with grove.".
var notSetting = mapvalidator.KeysAre(stringvalidator.RegexMatches(
	regexp.MustCompile(`^(?:$|[^g]|g$|g[^r]|gr$|gr[^o]|gro$|gro[^v]|grov$|grov[^e]|grove$|grove[^.])`),
	`must not start with "grove.": the orchestration settings have their own attributes (restart, update, placement, failover, the affinities and dependency)`))

// count is the range of a size, count or priority the API accepts.
var count = int64validator.Between(0, api.MaxCount)

func (r *clusterResource) Schema(ctx context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	stable := []planmodifier.Int64{int64planmodifier.UseStateForUnknown()}
	strList := func(desc string) schema.ListAttribute {
		return schema.ListAttribute{ElementType: types.StringType, Optional: true, Description: desc, Validators: names}
	}
	sized := func(desc string, v validator.Int64) schema.Int64Attribute {
		return schema.Int64Attribute{Optional: true, Computed: true, Description: desc, PlanModifiers: stable, Validators: []validator.Int64{v}}
	}
	resp.Schema = schema.Schema{
		Description: "A Grove cluster: nodes made from one profile, kept at desired_capacity by the agent. A profile change rolls out as the update settings say.",
		Attributes: map[string]schema.Attribute{
			"id":               schema.StringAttribute{Computed: true, Description: "The cluster's id.", PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
			"name":             schema.StringAttribute{Required: true, Description: "The cluster's name, unique in the project. Updated in place.", Validators: nameRule},
			"profile_id":       schema.StringAttribute{Required: true, Description: "The profile's id. A profile of the same type updates the nodes in place (a rolling update); another type forces a replacement."},
			"desired_capacity": sized("How many nodes the cluster should have, from min_size to max_size (default min_size). Updated in place (a resize).", count),
			"min_size":         sized("The least nodes (default 0).", count),
			"max_size":         sized("The most nodes; -1 is unbounded (default).", int64validator.Between(-1, api.MaxCount)),
			"timeout":          sized("Seconds each of the cluster's actions may take (default 3600).", int64validator.Between(0, api.MaxTimeout)),
			"metadata": schema.MapAttribute{ElementType: types.StringType, Optional: true, Computed: true, Description: "Free key-value metadata.",
				PlanModifiers: []planmodifier.Map{mapplanmodifier.UseStateForUnknown()}, Validators: []validator.Map{metadataRule{}}},
			"config": schema.MapAttribute{ElementType: types.StringType, Optional: true, Computed: true, Description: "Cluster config, such as node.name.format. The orchestration settings have their own attributes; keys starting with grove. are theirs.",
				PlanModifiers: []planmodifier.Map{mapplanmodifier.UseStateForUnknown()}, Validators: []validator.Map{notSetting}},
			"restart": schema.SingleNestedAttribute{Optional: true, Description: "What happens when a node dies.", Attributes: map[string]schema.Attribute{
				"condition": optStr("none, on-failure or any.", oneOf(api.RestartConditions)),
				"delay":     optStr("Wait before a restart, such as \"5s\".", duration{}),
				"max_attempts": schema.Int64Attribute{Optional: true, Description: "Restarts allowed within window; 0 is unlimited.",
					Validators: []validator.Int64{count}},
				"window": optStr("The period max_attempts counts over, such as \"1m\".", duration{}),
			}},
			"update": schema.SingleNestedAttribute{Optional: true, Description: "How a profile change rolls out.", Attributes: map[string]schema.Attribute{
				"parallelism":    schema.Int64Attribute{Optional: true, Description: "Nodes updated at once; 0 is all.", Validators: []validator.Int64{count}},
				"delay":          optStr("Wait between batches, such as \"10s\".", duration{}),
				"failure_action": optStr("pause, continue or rollback.", oneOf(api.FailureActions)),
				"monitor":        optStr("How long new nodes are watched after each batch, such as \"5s\".", duration{}),
				"max_failure_ratio": schema.Float64Attribute{Optional: true, Description: "Failures tolerated, 0 to 1.",
					Validators: []validator.Float64{float64validator.Between(0, 1)}},
				"order": optStr("stop-first or start-first.", oneOf(api.UpdateOrders)),
			}},
			"placement": schema.SingleNestedAttribute{Optional: true, Description: "Where nodes go.", Attributes: map[string]schema.Attribute{
				"policy": optStr("nodes order, load avg, spread, score, shift or none.", oneOf(api.PlacementPolicies)),
				"hosts":  strList("Candidate hosts."),
			}},
			"failover": schema.SingleNestedAttribute{Optional: true, Description: "OpenSVC's failover and flex topologies (docs/failover.md). Instance monitors run a failover or flex cluster, over the agent hosts for local.process and over the hosts its driver reports for the other profile types: leave desired_capacity and min_size out, the monitors size it.", Attributes: map[string]schema.Attribute{
				"topology":                 optStr("failover, flex, replicated or global.", oneOf(api.Topologies)),
				"orchestrate":              optStr("no, start or ha.", oneOf(api.OrchestrateModes)),
				"flex_min":                 schema.Int64Attribute{Optional: true, Description: "Flex: the fewest instances up.", Validators: []validator.Int64{count}},
				"flex_max":                 schema.Int64Attribute{Optional: true, Description: "Flex: the most instances up.", Validators: []validator.Int64{count}},
				"flex_target":              schema.Int64Attribute{Optional: true, Description: "Flex: the instances kept up.", Validators: []validator.Int64{count}},
				"ready_period":             optStr("How long a host stays ready before it starts, such as \"16s\".", duration{}),
				"maintenance_grace_period": optStr("How long peers keep a host's last state after its agent stops cleanly, such as \"60s\".", duration{}),
				"rejoin_grace_period":      optStr("How long a restarted agent waits for its peers before it starts anything, such as \"90s\".", duration{}),
			}},
			"hard_affinity":      strList("Clusters whose hosts this cluster's nodes must share."),
			"hard_anti_affinity": strList("Clusters whose hosts this cluster's nodes must avoid."),
			"soft_affinity":      strList("Clusters whose hosts are preferred."),
			"soft_anti_affinity": strList("Clusters whose hosts are avoided when possible."),
			"dependency": schema.MapNestedAttribute{Optional: true, Description: "Dependencies on other clusters, by name.", NestedObject: schema.NestedAttributeObject{
				Attributes: map[string]schema.Attribute{
					"grouping": schema.StringAttribute{Required: true, Description: "require_all, require_any, optional_all or exclude_all.",
						Validators: []validator.String{oneOf(api.Groupings)}},
					"restart_on": optStr("none, error, restart or refresh.", oneOf(api.RestartOn)),
					"clusters": schema.ListAttribute{ElementType: types.StringType, Required: true, Description: "The clusters depended on.",
						Validators: names},
				},
			}},
			"dependency_groups": dependencyGroupsSchema(),
			"status":            schema.StringAttribute{Computed: true, Description: "The cluster's status (ACTIVE, WARNING, ERROR, …)."},
			"status_reason":     schema.StringAttribute{Computed: true, Description: "Why the cluster has its status."},
			"node_ids":          schema.ListAttribute{ElementType: types.StringType, Computed: true, Description: "The ids of the cluster's nodes (known after an apply that changes the cluster)."},
		},
		Blocks: map[string]schema.Block{"timeouts": timeouts.Block(ctx, timeouts.Opts{Create: true, Update: true, Delete: true})},
	}
}

// ConfigValidators holds the sizes to min_size <= desired_capacity <=
// max_size at plan, as the agent does when the cluster is created.
func (r *clusterResource) ConfigValidators(context.Context) []resource.ConfigValidator {
	return []resource.ConfigValidator{sizeOrder{}}
}

func (r *clusterResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan forces a replacement when the new profile has another type:
// a cluster keeps its profile type.
func (r *clusterResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.client == nil || req.State.Raw.IsNull() || req.Plan.Raw.IsNull() {
		return
	}
	var plan, state clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() || plan.ProfileID.IsUnknown() || plan.ProfileID.Equal(state.ProfileID) {
		return
	}
	var oldP, newP struct {
		Spec map[string]any `json:"spec"`
	}
	okOld, err1 := get(ctx, r.client, "profile", state.ProfileID.ValueString(), &oldP)
	okNew, err2 := get(ctx, r.client, "profile", plan.ProfileID.ValueString(), &newP)
	if err1 == nil && err2 == nil && okOld && okNew && oldP.Spec["type"] != newP.Spec["type"] {
		tflog.Info(ctx, "The new profile has another type: the cluster is replaced, as a cluster keeps its profile type",
			map[string]any{"old_type": oldP.Spec["type"], "new_type": newP.Spec["type"]})
		resp.RequiresReplace = append(resp.RequiresReplace, path.Root("profile_id"))
	}
}

func (r *clusterResource) remoteConfig(ctx context.Context, m *clusterModel, diags *diag.Diagnostics) map[string]any {
	cfg := map[string]any{}
	if c := stringMap(ctx, m.Config, diags); c != nil {
		for k, v := range c {
			cfg[k] = v
		}
	}
	objMap := func(o types.Object) map[string]any {
		if o.IsNull() || o.IsUnknown() {
			return nil
		}
		out := map[string]any{}
		for k, v := range o.Attributes() {
			if g := goValue(v); g != nil {
				out[k] = g
			}
		}
		return out
	}
	if v := objMap(m.Restart); v != nil {
		cfg[api.ConfigRestart] = v
	}
	if v := objMap(m.Update); v != nil {
		cfg[api.ConfigUpdate] = v
	}
	if v := objMap(m.Placement); v != nil {
		cfg[api.ConfigPlacement] = v
	}
	if v := objMap(m.Failover); v != nil {
		cfg[api.ConfigFailover] = v
	}
	aff := map[string]any{}
	for i, l := range []types.List{m.HardAffinity, m.HardAntiAffinity, m.SoftAffinity, m.SoftAntiAffinity} {
		if v := goValue(l); v != nil {
			aff[affinityKeys[i]] = v
		}
	}
	if len(aff) > 0 {
		cfg[api.ConfigAffinity] = aff
	}
	if !m.Dependency.IsNull() && !m.Dependency.IsUnknown() {
		deps := map[string]any{}
		for name, v := range m.Dependency.Elements() {
			deps[name] = objMap(v.(types.Object))
		}
		cfg[api.ConfigDependencies] = deps
	}
	return cfg
}

// goValue turns a Terraform value into plain Go (numbers as float64, as JSON).
func goValue(v attr.Value) any {
	if v == nil || v.IsNull() || v.IsUnknown() {
		return nil
	}
	switch x := v.(type) {
	case types.String:
		return x.ValueString()
	case types.Int64:
		return float64(x.ValueInt64())
	case types.Float64:
		return x.ValueFloat64()
	case types.Bool:
		return x.ValueBool()
	case types.List:
		out := []any{}
		for _, e := range x.Elements() {
			out = append(out, goValue(e))
		}
		return out
	}
	return nil
}

func (r *clusterResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Create(ctx, 30*time.Minute)
	resp.Diagnostics.Append(d...)
	body := map[string]any{"name": plan.Name.ValueString(), "profile_id": plan.ProfileID.ValueString()}
	for k, v := range map[string]types.Int64{"desired_capacity": plan.DesiredCapacity, "min_size": plan.MinSize, "max_size": plan.MaxSize, "timeout": plan.Timeout} {
		if !v.IsNull() && !v.IsUnknown() {
			body[k] = v.ValueInt64()
		}
	}
	if m := stringMap(ctx, plan.Metadata, &resp.Diagnostics); m != nil {
		body["metadata"] = m
	}
	if cfg := r.remoteConfig(ctx, &plan, &resp.Diagnostics); len(cfg) > 0 {
		body["config"] = cfg
	}
	var out struct {
		Cluster api.Cluster `json:"cluster"`
	}
	res, err := r.client.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": body}, &out)
	if err != nil {
		resp.Diagnostics.AddError("Cannot create the cluster", apiError(err))
		return
	}
	// Record the id at once: a failed creation leaves a cluster to destroy.
	plan.ID = types.StringValue(out.Cluster.ID)
	wantGroups := plan.DependencyGroups // read replaces them with the agent's, none yet
	r.read(ctx, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	if err := wait(ctx, r.client, res, timeout); err != nil {
		resp.Diagnostics.AddError("The cluster's creation failed", err.Error())
	} else if !wantGroups.IsNull() {
		plan.DependencyGroups = wantGroups
		r.putDependencyGroups(ctx, &plan, &resp.Diagnostics)
	}
	r.read(ctx, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// read copies the remote cluster into the model; false on a 404.
func (r *clusterResource) read(ctx context.Context, m *clusterModel, diags *diag.Diagnostics) bool {
	var cl api.Cluster
	found, err := get(ctx, r.client, "cluster", m.ID.ValueString(), &cl)
	if err != nil {
		diags.AddError("Cannot read the cluster", apiError(err))
		return false
	}
	if !found {
		return false
	}
	m.Name = types.StringValue(cl.Name)
	m.ProfileID = types.StringValue(cl.ProfileID)
	m.DesiredCapacity = types.Int64Value(int64(cl.DesiredCapacity))
	m.MinSize = types.Int64Value(int64(cl.MinSize))
	m.MaxSize = types.Int64Value(int64(cl.MaxSize))
	m.Timeout = types.Int64Value(int64(cl.Timeout))
	m.Metadata = mapValue(cl.Metadata)
	m.Status = types.StringValue(cl.Status)
	m.StatusReason = types.StringValue(cl.StatusReason)
	nodeIDs, err := r.client.ClusterNodeIDs(ctx, &cl)
	if err != nil {
		diags.AddError("Cannot read the cluster's nodes", apiError(err))
		return false
	}
	ids := make([]attr.Value, len(nodeIDs))
	sort.Strings(nodeIDs)
	for i, id := range nodeIDs {
		ids[i] = types.StringValue(id)
	}
	m.NodeIDs = types.ListValueMust(types.StringType, ids)
	plain := map[string]any{}
	for k, v := range cl.Config {
		if !strings.HasPrefix(k, "grove.") {
			plain[k] = v
		}
	}
	m.Config = mapValue(plain)
	m.Restart = objectValue(restartTypes, cl.Config[api.ConfigRestart])
	m.Update = objectValue(updateTypes, cl.Config[api.ConfigUpdate])
	m.Placement = objectValue(placementTypes, cl.Config[api.ConfigPlacement])
	m.Failover = objectValue(failoverTypes, cl.Config[api.ConfigFailover])
	aff, _ := cl.Config[api.ConfigAffinity].(map[string]any)
	for i, dst := range []*types.List{&m.HardAffinity, &m.HardAntiAffinity, &m.SoftAffinity, &m.SoftAntiAffinity} {
		*dst = listValue(aff[affinityKeys[i]])
	}
	if deps, ok := cl.Config[api.ConfigDependencies].(map[string]any); ok && len(deps) > 0 {
		elems := map[string]attr.Value{}
		for name, v := range deps {
			elems[name] = objectValue(dependencyTypes, v)
		}
		m.Dependency = types.MapValueMust(types.ObjectType{AttrTypes: dependencyTypes}, elems)
	} else {
		m.Dependency = types.MapNull(types.ObjectType{AttrTypes: dependencyTypes})
	}
	r.readDependencyGroups(ctx, m, cl.Name, diags)
	return true
}

func listValue(v any) types.List {
	items, ok := v.([]any)
	if !ok {
		return types.ListNull(types.StringType)
	}
	elems := make([]attr.Value, len(items))
	for i, it := range items {
		s, _ := it.(string)
		elems[i] = types.StringValue(s)
	}
	return types.ListValueMust(types.StringType, elems)
}

// objectValue builds a nested object from a remote settings map; absent
// fields are null, so a configuration that leaves them out shows no diff.
func objectValue(types_ map[string]attr.Type, v any) types.Object {
	m, ok := v.(map[string]any)
	if !ok || m == nil {
		return types.ObjectNull(types_)
	}
	vals := map[string]attr.Value{}
	for k, t := range types_ {
		raw, present := m[k]
		switch t {
		case types.StringType:
			if s, ok := raw.(string); ok && present {
				vals[k] = types.StringValue(s)
			} else {
				vals[k] = types.StringNull()
			}
		case types.Int64Type:
			if f, ok := raw.(float64); ok && present {
				vals[k] = types.Int64Value(int64(f))
			} else {
				vals[k] = types.Int64Null()
			}
		case types.Float64Type:
			if f, ok := raw.(float64); ok && present {
				vals[k] = types.Float64Value(f)
			} else {
				vals[k] = types.Float64Null()
			}
		default:
			vals[k] = listValue(raw)
		}
	}
	return types.ObjectValueMust(types_, vals)
}

func (r *clusterResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readState(ctx, req, resp, r.read)
}

func (r *clusterResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state clusterModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := plan.Timeouts.Update(ctx, 30*time.Minute)
	resp.Diagnostics.Append(d...)
	body := map[string]any{}
	if !plan.Name.Equal(state.Name) {
		body["name"] = plan.Name.ValueString()
	}
	if !plan.ProfileID.Equal(state.ProfileID) {
		body["profile_id"] = plan.ProfileID.ValueString()
	}
	for k, pair := range map[string][2]types.Int64{"desired_capacity": {plan.DesiredCapacity, state.DesiredCapacity}, "min_size": {plan.MinSize, state.MinSize},
		"max_size": {plan.MaxSize, state.MaxSize}, "timeout": {plan.Timeout, state.Timeout}} {
		if !pair[0].IsUnknown() && !pair[0].IsNull() && !pair[0].Equal(pair[1]) {
			body[k] = pair[0].ValueInt64()
		}
	}
	if !plan.Metadata.Equal(state.Metadata) && !plan.Metadata.IsUnknown() {
		body["metadata"] = stringMap(ctx, plan.Metadata, &resp.Diagnostics)
	}
	newCfg := r.remoteConfig(ctx, &plan, &resp.Diagnostics)
	oldCfg := r.remoteConfig(ctx, &state, &resp.Diagnostics)
	changed := map[string]any{}
	for k, v := range newCfg {
		if toJSON(v) != toJSON(oldCfg[k]) {
			changed[k] = v
		}
	}
	for k := range oldCfg {
		if _, kept := newCfg[k]; !kept {
			changed[k] = nil // cleared
		}
	}
	if len(changed) > 0 {
		body["config"] = changed
	}
	tflog.Debug(ctx, "Updating the cluster", map[string]any{"fields": sortedKeys(body), "config": sortedKeys(changed)})
	if len(body) > 0 {
		res, err := r.client.Do(ctx, http.MethodPatch, "/v1/clusters/"+url.PathEscape(state.ID.ValueString()), nil, map[string]any{"cluster": body}, nil)
		if err != nil {
			resp.Diagnostics.AddError("Cannot update the cluster", apiError(err))
			return
		}
		if err := wait(ctx, r.client, res, timeout); err != nil {
			resp.Diagnostics.AddError("The cluster's update failed", err.Error())
		}
	}
	plan.ID = state.ID
	if !plan.DependencyGroups.Equal(state.DependencyGroups) {
		r.putDependencyGroups(ctx, &plan, &resp.Diagnostics)
	}
	r.read(ctx, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *clusterResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state clusterModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	timeout, d := state.Timeouts.Delete(ctx, 30*time.Minute)
	resp.Diagnostics.Append(d...)
	deleteObject(ctx, r.client, "cluster", state.ID.ValueString(), timeout, &resp.Diagnostics)
}

func (r *clusterResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByIDOrName(ctx, r.client, "cluster", req, resp)
}

var _ basetypes.ObjectValue
