package hcl

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	hclv2 "github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/zclconf/go-cty/cty"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// SchemaSource gives the schemas the plugins describe.
type SchemaSource interface {
	// Schema returns a profile or policy type's schema and versions.
	Schema(kind, typ string) (schema.Schema, []string, error)
	// Validate runs the plugin's own checks on a spec (those a schema cannot
	// express). It returns nil when the source cannot reach a plugin.
	Validate(kind, typ, version string, props map[string]any) error
}

// AgentSchemas reads schemas from an agent's type endpoints and validates
// through its validate endpoints, so third-party plugins are covered.
type AgentSchemas struct {
	Client *api.Client
	cache  map[string]agentType
}

type agentType struct {
	schema   schema.Schema
	versions []string
	err      error
}

// Schema implements SchemaSource.
func (a *AgentSchemas) Schema(kind, typ string) (schema.Schema, []string, error) {
	if a.cache == nil {
		a.cache = map[string]agentType{}
	}
	key := kind + "/" + typ
	if t, ok := a.cache[key]; ok {
		return t.schema, t.versions, t.err
	}
	var out struct {
		Type struct {
			Schema        json.RawMessage            `json:"schema"`
			SupportStatus map[string]json.RawMessage `json:"support_status"`
		} `json:"profile_type"`
		PolicyType struct {
			Schema        json.RawMessage            `json:"schema"`
			SupportStatus map[string]json.RawMessage `json:"support_status"`
		} `json:"policy_type"`
	}
	var t agentType
	_, err := a.Client.Do(context.Background(), http.MethodGet, "/v1/"+kind+"-types/"+url.PathEscape(typ), nil, nil, &out)
	switch {
	case api.IsNotFound(err):
		t.err = fmt.Errorf("no plugin of the agent provides the %s type %q", kind, typ)
	case err != nil:
		t.err = err
	default:
		raw, status := out.Type.Schema, out.Type.SupportStatus
		if kind == "policy" {
			raw, status = out.PolicyType.Schema, out.PolicyType.SupportStatus
		}
		if err := json.Unmarshal(raw, &t.schema); err != nil {
			t.err = fmt.Errorf("the agent's schema for %s is not valid: %w", typ, err)
		}
		for v := range status {
			t.versions = append(t.versions, v)
		}
		slices.Sort(t.versions)
	}
	a.cache[key] = t
	return t.schema, t.versions, t.err
}

// Validate implements SchemaSource.
func (a *AgentSchemas) Validate(kind, typ, version string, props map[string]any) error {
	path := "/v1/profiles/validate"
	if kind == "policy" {
		path = "/v1/policies/validate"
	}
	_, err := a.Client.Do(context.Background(), http.MethodPost, path, nil,
		map[string]any{kind: map[string]any{"spec": map[string]any{"type": typ, "version": version, "properties": props}}}, nil)
	var ae *api.Error
	if errors.As(err, &ae) && ae.Status == http.StatusBadRequest {
		return errors.New(ae.Message)
	}
	return nil
}

// DescribedSchemas serves schemas from plugin descriptions without an agent
// (the built-in plugin's, for `grove validate` offline).
type DescribedSchemas struct {
	Components []sdk.ComponentJSON
}

// Schema implements SchemaSource.
func (d *DescribedSchemas) Schema(kind, typ string) (schema.Schema, []string, error) {
	var known []string
	for _, c := range d.Components {
		if c.Kind == kind && c.Type == typ {
			return c.Schema, c.Versions, nil
		}
		if c.Kind == kind {
			known = append(known, c.Type)
		}
	}
	return nil, nil, fmt.Errorf("the %s type %q is not built in (built-in types: %s); start an agent with the plugin that provides it to validate against its schema", kind, typ, strings.Join(known, ", "))
}

// Validate implements SchemaSource; descriptions carry no plugin checks.
func (d *DescribedSchemas) Validate(string, string, string, map[string]any) error { return nil }

// Validate checks every profile's and policy's type, version and properties
// against the schemas, and reports each problem at the attribute at fault.
func Validate(def *Definition, src SchemaSource) hclv2.Diagnostics {
	var diags hclv2.Diagnostics
	for _, ref := range def.Order {
		switch ref.Kind {
		case "profile":
			p := def.Profiles[ref.Name]
			if p != nil {
				diags = append(diags, validateSpec(src, "profile", p.Type, p.Version, p.Properties, p.decl, &p.schema)...)
			}
		case "policy":
			p := def.Policies[ref.Name]
			if p != nil {
				diags = append(diags, validateSpec(src, "policy", p.Type, p.Version, p.Properties, p.decl, &p.schema)...)
			}
		}
	}
	return diags
}

// validateSpec checks a spec's properties against its type's schema, which
// it keeps in found for the plan.
func validateSpec(src SchemaSource, kind, typ, version string, props map[string]any, decl blockInfo, found *schema.Schema) hclv2.Diagnostics {
	at := func(field string) *hclv2.Range {
		if r, ok := decl.fields[field]; ok {
			return r.Ptr()
		}
		return decl.rng.Ptr()
	}
	sc, versions, err := src.Schema(kind, typ)
	if err != nil {
		return hclv2.Diagnostics{{Severity: hclv2.DiagError, Summary: "Unknown " + kind + " type", Detail: err.Error() + ".", Subject: at("type")}}
	}
	if !slices.Contains(versions, version) {
		return hclv2.Diagnostics{{Severity: hclv2.DiagError, Summary: "Unsupported version",
			Detail: fmt.Sprintf("Version %q of %s is not supported; supported versions are %s.", version, typ, strings.Join(versions, ", ")), Subject: at("version")}}
	}
	*found = sc
	var diags hclv2.Diagnostics
	_, ds := sc.Validate("properties", props)
	for _, d := range ds {
		diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid property", Detail: d.Field + ": " + d.Message, Subject: propRange(decl, d.Field)})
	}
	if len(diags) > 0 {
		return diags
	}
	if err := src.Validate(kind, typ, version, props); err != nil {
		for _, part := range strings.Split(err.Error(), "; ") {
			field, msg, ok := strings.Cut(strings.TrimPrefix(part, "spec."), ": ")
			if !ok {
				field, msg = "", part
			}
			diags = append(diags, &hclv2.Diagnostic{Severity: hclv2.DiagError, Summary: "Invalid property", Detail: strings.TrimSpace(field + ": " + msg), Subject: propRange(decl, field)})
		}
	}
	return diags
}

// propRange finds the source of a property path such as
// "properties.command[1]" or "properties.env.A".
func propRange(decl blockInfo, field string) *hclv2.Range {
	path := strings.TrimPrefix(field, "properties.")
	if path == field && field != "properties" {
		return decl.rng.Ptr()
	}
	segs := splitPath(path)
	if len(segs) == 0 {
		return decl.rng.Ptr()
	}
	attr, ok := decl.props[segs[0]]
	if !ok {
		return decl.rng.Ptr()
	}
	if len(segs) == 1 {
		return attr.Expr.Range().Ptr()
	}
	expr := attr.Expr
	for _, seg := range segs[1:] {
		next := childExpr(expr, seg)
		if next == nil {
			break
		}
		expr = next
	}
	return expr.Range().Ptr()
}

func splitPath(p string) []string {
	var out []string
	for _, part := range strings.Split(p, ".") {
		for part != "" {
			i := strings.IndexByte(part, '[')
			if i < 0 {
				out = append(out, part)
				break
			}
			if i > 0 {
				out = append(out, part[:i])
			}
			j := strings.IndexByte(part, ']')
			if j < i {
				break
			}
			out = append(out, part[i:j+1])
			part = part[j+1:]
		}
	}
	return out
}

func childExpr(expr hclv2.Expression, seg string) hclv2.Expression {
	switch x := unbound(expr).(type) {
	case *hclsyntax.TupleConsExpr:
		if strings.HasPrefix(seg, "[") {
			i, err := strconv.Atoi(strings.Trim(seg, "[]"))
			if err == nil && i >= 0 && i < len(x.Exprs) {
				return x.Exprs[i]
			}
		}
	case *hclsyntax.ObjectConsExpr:
		for _, item := range x.Items {
			k, diags := item.KeyExpr.Value(nil)
			if !diags.HasErrors() && k.Type() == cty.String && k.AsString() == seg {
				return item.ValueExpr
			}
		}
	}
	return nil
}
