package provider

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"

	"github.com/hashicorp/terraform-plugin-framework-jsontypes/jsontypes"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/tfsdk"

	"github.com/grovehq/grove/api"
)

// This file holds properties_wo, the write-only counterpart of a spec's
// properties: sensitive values Terraform passes to the provider and then
// forgets, so that they reach the agent (which seals them) without ever
// being in a plan or state file.

// propSchema is the part of a type's property schema (the JSON of
// plugins/sdk/schema.Property, as GET /v1/profile-types/{type} shows it)
// that says where sensitive values may be.
type propSchema struct {
	Type      string                 `json:"type"`
	Sensitive bool                   `json:"sensitive"`
	Schema    map[string]*propSchema `json:"schema"`
	Elem      *propSchema            `json:"elem"`
}

// typeSchema fetches the schema of a type and version; found is false
// when the agent has no such type (the spec validation then says so).
func typeSchema(ctx context.Context, c *api.Client, kind, typ, version string) (schema map[string]*propSchema, found bool, err error) {
	var out map[string]struct {
		Schema map[string]*propSchema `json:"schema"`
	}
	_, err = c.Do(ctx, http.MethodGet, "/v1/"+kind+"-types/"+url.PathEscape(typ+"-"+version), nil, nil, &out)
	if api.IsNotFound(err) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return out[kind+"_type"].Schema, true, nil
}

// checkWriteOnly reports the first value of wo (described by p, at field)
// that the type does not mark sensitive: a write-only value the agent would
// then show in clear would gain nothing from being kept out of the state.
func checkWriteOnly(typ, field string, p *propSchema, v any) error {
	if p.Sensitive {
		return nil
	}
	m, isMap := v.(map[string]any)
	if !isMap || (p.Schema == nil && p.Elem == nil) {
		return fmt.Errorf("%s: %s does not mark this property sensitive; properties_wo takes only sensitive values, so set it in properties", field, typ)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		sub := p.Elem
		if p.Schema != nil {
			sub = p.Schema[k]
		}
		if sub == nil {
			return fmt.Errorf("%s.%s: %s has no such property", field, k, typ)
		}
		if err := checkWriteOnly(typ, field+"."+k, sub, m[k]); err != nil {
			return err
		}
	}
	return nil
}

// mergeProps returns props with wo merged over it, maps key by key. A value
// set in both is an error naming it: which one should win is not clear.
func mergeProps(field string, props, wo map[string]any) (map[string]any, error) {
	out := make(map[string]any, len(props)+len(wo))
	for k, v := range props {
		out[k] = v
	}
	keys := make([]string, 0, len(wo))
	for k := range wo {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		cur, ok := out[k]
		if !ok {
			out[k] = wo[k]
			continue
		}
		a, aMap := cur.(map[string]any)
		b, bMap := wo[k].(map[string]any)
		if !aMap || !bMap {
			return nil, fmt.Errorf("%s.%s is set in both properties and properties_wo; set it in one of them", field, k)
		}
		m, err := mergeProps(field+"."+k, a, b)
		if err != nil {
			return nil, err
		}
		out[k] = m
	}
	return out, nil
}

// writeOnlyProps reads properties_wo from the configuration: nil when it is
// unset; known is false while it is unknown (at plan, from a value computed
// at apply).
func writeOnlyProps(ctx context.Context, config tfsdk.Config) (wo map[string]any, known bool, err error) {
	var v jsontypes.Normalized
	if d := config.GetAttribute(ctx, path.Root("properties_wo"), &v); d.HasError() {
		return nil, false, fmt.Errorf("reading properties_wo: %s", d[0].Detail())
	}
	if v.IsUnknown() {
		return nil, false, nil
	}
	if v.IsNull() {
		return nil, true, nil
	}
	var m map[string]any
	if err := json.Unmarshal([]byte(v.ValueString()), &m); err != nil || m == nil {
		return nil, true, fmt.Errorf("properties_wo must be a JSON object (use jsonencode)")
	}
	return m, true, nil
}

// specWithWriteOnly is the properties a spec is created with: properties
// and, when the configuration sets it, properties_wo merged over them after
// checking that each of its values is one the type marks sensitive. ok is
// false when properties_wo is still unknown.
func (r *specResource) specWithWriteOnly(ctx context.Context, config tfsdk.Config, typ, version string, props map[string]any) (merged map[string]any, ok bool, err error) {
	wo, known, err := writeOnlyProps(ctx, config)
	if err != nil || !known {
		return nil, known, err
	}
	if wo == nil {
		return props, true, nil
	}
	schema, found, err := typeSchema(ctx, r.client, r.kind, typ, version)
	if err != nil {
		return nil, true, fmt.Errorf("reading the schema of %s-%s: %s", typ, version, apiError(err))
	}
	if found {
		if err := checkWriteOnly(typ+"-"+version, "properties_wo", &propSchema{Type: "Map", Schema: schema}, wo); err != nil {
			return nil, true, err
		}
	}
	merged, err = mergeProps("properties_wo", props, wo)
	return merged, true, err
}

// stripWriteOnly is Read's view of remote properties: each value the API
// shows as "(sensitive)" takes the value at the same place in known (the
// configured properties, which the state keeps), and one known does not
// have came from properties_wo and is left out, with any map left empty by
// that, so the state matches the configured properties again.
func stripWriteOnly(remote, known any, hasKnown bool) (any, bool) {
	if remote == redacted {
		return known, hasKnown
	}
	switch x := remote.(type) {
	case map[string]any:
		km, _ := known.(map[string]any)
		out := make(map[string]any, len(x))
		for k, v := range x {
			kv, has := km[k]
			if nv, keep := stripWriteOnly(v, kv, has); keep {
				out[k] = nv
			}
		}
		if !hasKnown && len(out) == 0 && len(x) > 0 {
			return nil, false
		}
		return out, true
	case []any:
		kl, _ := known.([]any)
		out := make([]any, len(x))
		for i, v := range x {
			if i < len(kl) {
				out[i], _ = stripWriteOnly(v, kl[i], true)
			} else {
				// A list cannot lose an item and keep its meaning.
				out[i] = v
			}
		}
		return out, true
	}
	return remote, true
}
