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
	"github.com/hashicorp/terraform-plugin-framework-validators/int64validator"
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
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/grovehq/grove/api"
)

// specResource is grove_profile or grove_policy: a typed spec that cannot
// change in place (Senlin's rule), so type, version and properties force a
// replacement; the name (and a profile's metadata) update in place.
type specResource struct {
	kind   string
	client *api.Client
}

type specModel struct {
	ID         types.String         `tfsdk:"id"`
	Name       types.String         `tfsdk:"name"`
	Type       types.String         `tfsdk:"type"`
	Version    types.String         `tfsdk:"version"`
	Properties jsontypes.Normalized `tfsdk:"properties"`
	Metadata   types.Map            `tfsdk:"metadata"`
	FullType   types.String         `tfsdk:"full_type"`
	// PropertiesWO is write-only: Terraform 1.11 and later send it in the
	// configuration and keep it out of plans and state, so it is always null
	// here except in Create's config.
	PropertiesWO        jsontypes.Normalized `tfsdk:"properties_wo"`
	PropertiesWOVersion types.Int64          `tfsdk:"properties_wo_version"`
}

func (r *specResource) Metadata(_ context.Context, req resource.MetadataRequest, resp *resource.MetadataResponse) {
	resp.TypeName = req.ProviderTypeName + "_" + r.kind
}

func (r *specResource) Schema(_ context.Context, _ resource.SchemaRequest, resp *resource.SchemaResponse) {
	attrs := map[string]schema.Attribute{
		"id": schema.StringAttribute{Computed: true, Description: "The " + r.kind + "'s id.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
		"name": schema.StringAttribute{Required: true, Description: "The " + r.kind + "'s name, unique in the project.", Validators: nameRule},
		"type": schema.StringAttribute{Required: true, Description: "The " + r.kind + " type, such as local.process or senlin.policy.deletion.",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
		"version": schema.StringAttribute{Required: true, Description: "The type's version, such as \"1.0\".",
			PlanModifiers: []planmodifier.String{stringplanmodifier.RequiresReplace()}},
		"properties": schema.StringAttribute{Optional: true, Computed: true, Sensitive: true, CustomType: jsontypes.NormalizedType{},
			Description: "The properties as JSON (use jsonencode). They are validated against the plugin's schema at plan time. A change forces a replacement: specs are immutable. " +
				"Sensitive: some properties (a process's or container's env) are secrets, which the API shows as \"(sensitive)\"; the state keeps what was configured.",
			PlanModifiers: []planmodifier.String{sameJSONKeepsState{}, stringplanmodifier.RequiresReplace()}},
		"properties_wo": schema.StringAttribute{Optional: true, Sensitive: true, WriteOnly: true, CustomType: jsontypes.NormalizedType{},
			Description: "Sensitive property values as JSON (use jsonencode), merged over properties when the " + r.kind + " is created and never stored in the plan or state: " +
				"for values such as a process's env that only the agent should keep. Only properties the type marks sensitive are accepted, and not ones also set in properties. " +
				"Terraform does not see a change of a write-only value: change properties_wo_version to roll a new one in (specs are immutable, so that replaces the " + r.kind + "). " +
				"Needs Terraform 1.11 or later.",
		},
		"properties_wo_version": schema.Int64Attribute{Optional: true,
			Description:   "A number to change whenever properties_wo changes: a change replaces the " + r.kind + " with one carrying the current properties_wo. Needs properties_wo.",
			PlanModifiers: []planmodifier.Int64{int64planmodifier.RequiresReplace()},
			// It versions properties_wo: without it, it means nothing.
			Validators: []validator.Int64{int64validator.AlsoRequires(path.MatchRoot("properties_wo"))}},
		"full_type": schema.StringAttribute{Computed: true, Description: "Type and version, as Senlin writes them (local.process-1.0).",
			PlanModifiers: []planmodifier.String{stringplanmodifier.UseStateForUnknown()}},
	}
	if r.kind == "profile" {
		attrs["metadata"] = schema.MapAttribute{ElementType: types.StringType, Optional: true, Description: "Free key-value metadata; updated in place.",
			Validators: []validator.Map{metadataRule{}}}
	} else {
		attrs["metadata"] = schema.MapAttribute{ElementType: types.StringType, Computed: true, Description: "Not used by policies.",
			PlanModifiers: []planmodifier.Map{mapplanmodifier.UseStateForUnknown()}}
	}
	resp.Schema = schema.Schema{Description: fmt.Sprintf("A Grove %s: a typed spec served by a plugin.", r.kind), Attributes: attrs}
}

func (r *specResource) Configure(_ context.Context, req resource.ConfigureRequest, resp *resource.ConfigureResponse) {
	r.client = clientFrom(req.ProviderData, &resp.Diagnostics)
}

// ModifyPlan validates the spec against the plugin's schema through the
// agent, so a bad property fails the plan, naming the field.
func (r *specResource) ModifyPlan(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	if r.client == nil || req.Plan.Raw.IsNull() {
		return
	}
	var plan specModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() || plan.Type.IsUnknown() || plan.Version.IsUnknown() || plan.Properties.IsUnknown() {
		return
	}
	props, err := decodeProps(plan.Properties.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("properties"), "Invalid properties", "properties must be a JSON object (use jsonencode): "+err.Error())
		return
	}
	// The spec to validate is the one Create would send: with properties_wo.
	props, known, err := r.specWithWriteOnly(ctx, req.Config, plan.Type.ValueString(), plan.Version.ValueString(), props)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("properties_wo"), "Invalid properties_wo", err.Error())
		return
	}
	if !known {
		tflog.Debug(ctx, "properties_wo is not known yet: the spec is validated at apply")
		return
	}
	tflog.Debug(ctx, "Validating the spec against the plugin's schema through the agent", map[string]any{"type": plan.Type.ValueString(), "version": plan.Version.ValueString()})
	spec := map[string]any{"type": plan.Type.ValueString(), "version": plan.Version.ValueString(), "properties": props}
	_, err = r.client.Do(ctx, http.MethodPost, "/v1/"+collections[r.kind]+"/validate", nil, map[string]any{r.kind: map[string]any{"spec": spec}}, nil)
	if ae, ok := err.(*api.Error); ok && ae.Status == http.StatusBadRequest {
		attr := path.Root("properties")
		switch {
		case strings.HasPrefix(ae.Message, "spec.type"):
			attr = path.Root("type")
		case strings.HasPrefix(ae.Message, "spec.version"):
			attr = path.Root("version")
		}
		resp.Diagnostics.AddAttributeError(attr, "Invalid "+r.kind+" spec", ae.Message)
	}
}

// decodeProps reads properties as Create sends them: unset is an empty
// object.
func decodeProps(s string) (map[string]any, error) {
	if strings.TrimSpace(s) == "" {
		return map[string]any{}, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return nil, fmt.Errorf("not an object: %w", err)
	}
	if m == nil {
		return map[string]any{}, nil
	}
	return m, nil
}

func (r *specResource) Create(ctx context.Context, req resource.CreateRequest, resp *resource.CreateResponse) {
	var plan specModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	if resp.Diagnostics.HasError() {
		return
	}
	props, err := decodeProps(plan.Properties.ValueString())
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("properties"), "Invalid properties", err.Error())
		return
	}
	// properties_wo is only in the configuration: the plan holds it as null.
	props, _, err = r.specWithWriteOnly(ctx, req.Config, plan.Type.ValueString(), plan.Version.ValueString(), props)
	if err != nil {
		resp.Diagnostics.AddAttributeError(path.Root("properties_wo"), "Invalid properties_wo", err.Error())
		return
	}
	body := map[string]any{"name": plan.Name.ValueString(), "spec": map[string]any{"type": plan.Type.ValueString(), "version": plan.Version.ValueString(), "properties": props}}
	if r.kind == "profile" {
		if m := stringMap(ctx, plan.Metadata, &resp.Diagnostics); m != nil {
			body["metadata"] = m
		}
	}
	var out map[string]struct {
		ID string `json:"id"`
	}
	if _, err := r.client.Do(ctx, http.MethodPost, "/v1/"+collections[r.kind], nil, map[string]any{r.kind: body}, &out); err != nil {
		resp.Diagnostics.AddError("Cannot create the "+r.kind, apiError(err))
		return
	}
	plan.ID = types.StringValue(out[r.kind].ID)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
	r.read(ctx, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

// read copies the remote object into the model; it reports false on a 404.
func (r *specResource) read(ctx context.Context, m *specModel, diags *diag.Diagnostics) bool {
	var obj struct {
		Name     string         `json:"name"`
		Type     string         `json:"type"`
		Spec     map[string]any `json:"spec"`
		Metadata map[string]any `json:"metadata"`
	}
	found, err := get(ctx, r.client, r.kind, m.ID.ValueString(), &obj)
	if err != nil {
		diags.AddError("Cannot read the "+r.kind, apiError(err))
		return false
	}
	if !found {
		return false
	}
	m.Name = types.StringValue(obj.Name)
	m.FullType = types.StringValue(obj.Type)
	m.Type = types.StringValue(fmt.Sprint(obj.Spec["type"]))
	m.Version = types.StringValue(fmt.Sprint(obj.Spec["version"]))
	props, _ := obj.Spec["properties"].(map[string]any)
	if props == nil {
		props = map[string]any{}
	}
	// The API shows sensitive values as a placeholder; the state keeps the
	// configured value in its place, or every read would be a change, and
	// leaves out what properties_wo added.
	if cur, err := decodeProps(m.Properties.ValueString()); err == nil && !m.Properties.IsNull() && !m.Properties.IsUnknown() {
		stripped, _ := stripWriteOnly(props, cur, true)
		if toJSON(stripped) != toJSON(props) {
			tflog.Debug(ctx, "The state keeps the configured properties where the API shows \"(sensitive)\", and leaves out what properties_wo added")
		}
		props = stripped.(map[string]any)
	}
	// The framework keeps the prior spelling when this means the same JSON
	// (jsontypes.Normalized's semantic equality).
	m.Properties = jsontypes.NewNormalizedValue(toJSON(props))
	if r.kind == "profile" && (len(obj.Metadata) > 0 || !m.Metadata.IsNull()) {
		m.Metadata = mapValue(obj.Metadata)
	} else if r.kind == "policy" {
		m.Metadata = mapValue(map[string]any{})
	}
	return true
}

func (r *specResource) Read(ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse) {
	readState(ctx, req, resp, r.read)
}

func (r *specResource) Update(ctx context.Context, req resource.UpdateRequest, resp *resource.UpdateResponse) {
	var plan, state specModel
	resp.Diagnostics.Append(req.Plan.Get(ctx, &plan)...)
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	body := map[string]any{"name": plan.Name.ValueString()}
	if r.kind == "profile" {
		if m := stringMap(ctx, plan.Metadata, &resp.Diagnostics); m != nil {
			body["metadata"] = m
		}
	}
	if _, err := r.client.Do(ctx, http.MethodPatch, "/v1/"+collections[r.kind]+"/"+url.PathEscape(state.ID.ValueString()), nil, map[string]any{r.kind: body}, nil); err != nil {
		resp.Diagnostics.AddError("Cannot update the "+r.kind, apiError(err))
		return
	}
	plan.ID = state.ID
	r.read(ctx, &plan, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.State.Set(ctx, &plan)...)
}

func (r *specResource) Delete(ctx context.Context, req resource.DeleteRequest, resp *resource.DeleteResponse) {
	var state specModel
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	// Profiles and policies are deleted at once, without an action to follow.
	deleteObject(ctx, r.client, r.kind, state.ID.ValueString(), time.Minute, &resp.Diagnostics)
}

func (r *specResource) ImportState(ctx context.Context, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	importByIDOrName(ctx, r.client, r.kind, req, resp)
}

// sameJSONKeepsState keeps the prior state's properties in the plan when the
// configured ones are the same JSON document by jsontypes.Normalized's
// semantic equality (spacing and key order aside); unset properties are an
// empty object, as Create sends them. The framework applies semantic
// equality only to what Create, Read and Update return, not to a plan, so
// without this a configuration respelling the same JSON would plan a
// replacement: properties force one.
type sameJSONKeepsState struct{}

func (sameJSONKeepsState) Description(context.Context) string {
	return "Equal JSON documents are not a change."
}

func (j sameJSONKeepsState) MarkdownDescription(ctx context.Context) string {
	return j.Description(ctx)
}

func (sameJSONKeepsState) PlanModifyString(ctx context.Context, req planmodifier.StringRequest, resp *planmodifier.StringResponse) {
	if req.StateValue.IsNull() || req.ConfigValue.IsUnknown() {
		return
	}
	configured := req.ConfigValue.ValueString()
	if req.ConfigValue.IsNull() {
		configured = "{}"
	}
	same, d := jsontypes.NewNormalizedValue(req.StateValue.ValueString()).StringSemanticEquals(ctx, jsontypes.NewNormalizedValue(configured))
	if same && !d.HasError() {
		tflog.Debug(ctx, "the configured properties are the state's JSON document: the plan keeps the state's")
		resp.PlanValue = req.StateValue
	}
}

// redacted is what the API shows in place of a sensitive value.
const redacted = "(sensitive)"
