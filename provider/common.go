package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/hashicorp/terraform-plugin-framework/attr"
	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/types"
	"github.com/hashicorp/terraform-plugin-log/tflog"

	"github.com/grovehq/grove/api"
)

// clientFrom takes the API client a resource or data source was configured with.
func clientFrom(data any, diags *diag.Diagnostics) *api.Client {
	if data == nil {
		return nil
	}
	c, ok := data.(*api.Client)
	if !ok {
		diags.AddError("Unexpected provider data", fmt.Sprintf("Expected *api.Client, got %T.", data))
	}
	return c
}

// collections maps an object kind to its API collection.
var collections = map[string]string{"profile": "profiles", "policy": "policies", "cluster": "clusters", "node": "nodes"}

// get reads one object by id or name into out (the value under key kind);
// found is false on a 404.
func get(ctx context.Context, c *api.Client, kind, ident string, out any) (bool, error) {
	var body map[string]json.RawMessage
	_, err := c.Do(ctx, http.MethodGet, "/v1/"+collections[kind]+"/"+url.PathEscape(ident), nil, nil, &body)
	if api.IsNotFound(err) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	raw, ok := body[kind]
	if !ok {
		return false, fmt.Errorf("the agent's answer for the %s %q holds no %q object", kind, ident, kind)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return false, fmt.Errorf("read the agent's answer for the %s %q: %w", kind, ident, err)
	}
	return true, nil
}

// wait follows an action to its end within the timeout; a failed action's
// reason becomes the error.
func wait(ctx context.Context, c *api.Client, r *api.Response, timeout time.Duration) error {
	id := r.ActionID()
	if id == "" {
		return nil
	}
	ctx = tflog.SetField(ctx, "grove_action", id)
	tflog.Debug(ctx, "Waiting for the action to end", map[string]any{"timeout": timeout.String()})
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	act, err := c.WaitAction(ctx, id, nil)
	if act != nil {
		tflog.Debug(ctx, "The action ended", map[string]any{"status": act.Status, "status_reason": act.StatusReason})
	}
	if err != nil {
		if act != nil && act.Terminal() {
			return fmt.Errorf("action %s (%s) %s: %s", act.Name, act.ID, strings.ToLower(act.Status), act.StatusReason)
		}
		return fmt.Errorf("waiting for action %s: %w", id, err)
	}
	return nil
}

// readState is every resource's Read: it refreshes the state through read,
// and an object gone from the agent leaves the state, so Terraform plans to
// create it again.
func readState[M any](ctx context.Context, req resource.ReadRequest, resp *resource.ReadResponse, read func(context.Context, *M, *diag.Diagnostics) bool) {
	var state M
	resp.Diagnostics.Append(req.State.Get(ctx, &state)...)
	if resp.Diagnostics.HasError() {
		return
	}
	if !read(ctx, &state, &resp.Diagnostics) {
		if !resp.Diagnostics.HasError() {
			tflog.Info(ctx, "The object is gone from the agent: removing it from the state, so the plan creates it again")
			resp.State.RemoveResource(ctx)
		}
		return
	}
	resp.Diagnostics.Append(resp.State.Set(ctx, &state)...)
}

// deleteObject deletes an object and follows the action doing it, if any,
// within the timeout; an object already gone counts as deleted.
func deleteObject(ctx context.Context, c *api.Client, kind, id string, timeout time.Duration, diags *diag.Diagnostics) {
	res, err := c.Do(ctx, http.MethodDelete, "/v1/"+collections[kind]+"/"+url.PathEscape(id), nil, nil, nil)
	if api.IsNotFound(err) {
		tflog.Debug(ctx, "The "+kind+" is already gone: counted as deleted", map[string]any{"id": id})
		return
	}
	if err != nil {
		diags.AddError("Cannot delete the "+kind, apiError(err))
		return
	}
	if err := wait(ctx, c, res, timeout); err != nil {
		diags.AddError("The "+kind+"'s deletion failed", err.Error())
	}
}

func toJSON(v any) string {
	if v == nil {
		return "{}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func stringMap(ctx context.Context, m types.Map, diags *diag.Diagnostics) map[string]any {
	if m.IsNull() || m.IsUnknown() {
		return nil
	}
	var raw map[string]string
	diags.Append(m.ElementsAs(ctx, &raw, false)...)
	out := map[string]any{}
	for k, v := range raw {
		out[k] = v
	}
	return out
}

// mapValue turns a remote map into a Terraform map of strings; non-string
// values are JSON-encoded.
func mapValue(m map[string]any) types.Map {
	elems := map[string]attr.Value{}
	for k, v := range m {
		if s, ok := v.(string); ok {
			elems[k] = types.StringValue(s)
		} else {
			elems[k] = types.StringValue(toJSON(v))
		}
	}
	return types.MapValueMust(types.StringType, elems)
}

// importByIDOrName resolves an import id (a UUID, a name or a short id) to
// the object's id.
func importByIDOrName(ctx context.Context, c *api.Client, kind string, req resource.ImportStateRequest, resp *resource.ImportStateResponse) {
	var obj struct {
		ID string `json:"id"`
	}
	found, err := get(ctx, c, kind, req.ID, &obj)
	if err != nil {
		resp.Diagnostics.AddError("Cannot import the "+kind, err.Error())
		return
	}
	if !found {
		resp.Diagnostics.AddError("Cannot import the "+kind, fmt.Sprintf("No %s has the id or name %q.", kind, req.ID))
		return
	}
	resp.Diagnostics.Append(resp.State.SetAttribute(ctx, path.Root("id"), obj.ID)...)
}

// apiError renders an API failure for a diagnostic.
func apiError(err error) string {
	if ae, ok := err.(*api.Error); ok {
		return ae.Message
	}
	return err.Error()
}

// sortedKeys names what a request changes, for a log line without values.
func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
