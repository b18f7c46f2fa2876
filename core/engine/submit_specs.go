package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// ParsedSpec is a profile or policy spec after validation.
type ParsedSpec struct {
	Type       string
	Version    string
	Properties map[string]any
	// schema is the type's, which says what to seal.
	schema schema.Schema
}

// ValidateSpec checks a profile or policy spec (kind "profile" or "policy")
// against the schema its plugin publishes, and asks the plugin for the checks
// a schema cannot express. Errors name the field as "spec.properties.x".
func (e *Engine) ValidateSpec(ctx context.Context, kind string, spec map[string]any) (*ParsedSpec, error) {
	if spec == nil {
		return nil, BadRequest("spec is required.")
	}
	for k := range spec {
		if !slices.Contains([]string{"type", "version", "properties", "description"}, k) {
			return nil, BadRequest("spec.%s is not a spec field; a spec has type, version and properties.", k)
		}
	}
	typ, _ := spec["type"].(string)
	if typ == "" {
		return nil, BadRequest("spec.type is required.")
	}
	version, err := specVersion(spec["version"])
	if err != nil {
		return nil, err
	}
	comp, ok := e.plugins.Component(kind, typ)
	if !ok {
		var known []string
		for _, c := range e.plugins.Components(kind) {
			known = append(known, c.Type)
		}
		return nil, BadRequest("spec.type: the %s type %q is not provided by any plugin; known types are %s.", kind, typ, strings.Join(known, ", "))
	}
	if !slices.Contains(comp.Versions, version) {
		return nil, BadRequest("spec.version: version %q of %s is not supported; supported versions are %s.", version, typ, strings.Join(comp.Versions, ", "))
	}
	props := map[string]any{}
	if p, ok := spec["properties"]; ok && p != nil {
		m, ok := p.(map[string]any)
		if !ok {
			return nil, BadRequest("spec.properties must be a map.")
		}
		props = m
	}
	normalised, diags := comp.Schema.Validate("spec.properties", props)
	if len(diags) > 0 {
		return nil, BadRequest("%s", diags.Error())
	}
	if err := checkSubmitted(comp.Schema, props); err != nil {
		return nil, err
	}
	s := sdk.Spec{Type: typ, Version: version, Properties: props}
	var ds schema.Diagnostics
	err = e.plugins.Call(ctx, kind, typ, func(ctx context.Context, client *sdk.Client) (err error) {
		if kind == "profile" {
			ds, err = client.ValidateProfile(ctx, s)
		} else {
			ds, err = client.ValidatePolicy(ctx, s)
		}
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("The %s spec cannot be validated now: %w.", kind, err)
	}
	var pd []error
	for _, d := range ds {
		pd = append(pd, errors.New("spec."+d.Error()))
	}
	if len(pd) > 0 {
		msgs := make([]string, len(pd))
		for i, d := range pd {
			msgs[i] = d.Error()
		}
		return nil, BadRequest("%s", strings.Join(msgs, "; "))
	}
	return &ParsedSpec{Type: typ, Version: version, Properties: normalised, schema: comp.Schema}, nil
}

func specVersion(v any) (string, error) {
	switch x := v.(type) {
	case string:
		if x == "" {
			return "", BadRequest("spec.version is required.")
		}
		return x, nil
	case float64:
		s := strconv.FormatFloat(x, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s, nil
	case nil:
		return "", BadRequest("spec.version is required.")
	}
	return "", BadRequest("spec.version must be a string such as \"1.0\".")
}

// CreateProfile validates and stores a profile.
func (e *Engine) CreateProfile(ctx context.Context, c Caller, name string, spec, metadata map[string]any) (*model.Profile, error) {
	if err := model.ValidateName("name", name); err != nil {
		return nil, BadRequest("%s", err)
	}
	p, err := e.buildProfile(ctx, c, name, spec, metadata)
	if err != nil {
		return nil, err
	}
	return p, e.store.CreateProfile(ctx, p)
}

// ValidateProfile validates a profile without storing it.
func (e *Engine) ValidateProfile(ctx context.Context, c Caller, spec map[string]any) (*model.Profile, error) {
	p, err := e.buildProfile(ctx, c, "validated_profile", spec, nil)
	if p != nil {
		p.ID = ""
	}
	return p, err
}

func (e *Engine) buildProfile(ctx context.Context, c Caller, name string, spec, metadata map[string]any) (*model.Profile, error) {
	ps, err := e.ValidateSpec(ctx, "profile", spec)
	if err != nil {
		return nil, err
	}
	if err := e.checkHostAccess(ctx, c.Project, ps.Type, ps.Properties); err != nil {
		return nil, err
	}
	id := e.newID()
	spec, props, err := e.sealSpec(ps.schema, id, spec, ps.Properties)
	if err != nil {
		return nil, err
	}
	return &model.Profile{ID: id, Name: name, Type: ps.Type, Version: ps.Version, Spec: spec, Properties: props,
		Metadata: metadata, User: c.User, Project: c.Project, CreatedAt: e.cfg.Now()}, nil
}

// UpdateProfile renames a profile or replaces its metadata.
func (e *Engine) UpdateProfile(ctx context.Context, c Caller, ident string, name *string, metadata map[string]any) (*model.Profile, error) {
	p, err := e.store.FindProfile(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	renamed, err := e.checkRename(ctx, "profile", p.Name, name, c.Project)
	if err != nil {
		return nil, err
	}
	if renamed {
		p.Name = *name
	}
	if metadata != nil {
		p.Metadata = metadata
	}
	now := e.cfg.Now()
	p.UpdatedAt = &now
	return p, e.store.UpdateProfile(ctx, p)
}

// DeleteProfile deletes a profile no cluster or node uses.
func (e *Engine) DeleteProfile(ctx context.Context, c Caller, ident string) error {
	p, err := e.store.FindProfile(ctx, c.Project, ident)
	if err != nil {
		return err
	}
	return e.deleteUnused(ctx, "profile", p.ID, store.Store.ProfileInUse, store.Store.DeleteProfile,
		fmt.Sprintf("The profile '%s' cannot be deleted: it is still used by a cluster, a node or an action under way.", p.Name))
}

// deleteUnused deletes a profile or policy (kind) unless inUse says
// something uses it, answering 409 with refusal then. The check and the
// deletion are one transaction that holds the object (LockSpec), as the
// creates, updates and attaches that name it do while they write:
// checked apart, a cluster created from a profile, or a policy's binding
// written, between them was left naming an object that was gone, which
// nothing could then delete.
func (e *Engine) deleteUnused(ctx context.Context, kind, id string, inUse func(store.Store, context.Context, string) (bool, error),
	del func(store.Store, context.Context, string) error, refusal string) error {
	return e.store.InTx(ctx, func(tx store.Store) error {
		if err := tx.LockSpec(ctx, kind, id, true); err != nil {
			return err
		}
		used, err := inUse(tx, ctx, id)
		if err != nil {
			return err
		}
		if used {
			return Conflict("ResourceInUse", "%s", refusal)
		}
		return del(tx, ctx, id)
	})
}

// CreatePolicy validates and stores a policy.
func (e *Engine) CreatePolicy(ctx context.Context, c Caller, name string, spec map[string]any) (*model.Policy, error) {
	if err := model.ValidateName("name", name); err != nil {
		return nil, BadRequest("%s", err)
	}
	p, err := e.buildPolicy(ctx, c, name, spec)
	if err != nil {
		return nil, err
	}
	return p, e.store.CreatePolicy(ctx, p)
}

// ValidatePolicy validates a policy without storing it.
func (e *Engine) ValidatePolicy(ctx context.Context, c Caller, spec map[string]any) (*model.Policy, error) {
	p, err := e.buildPolicy(ctx, c, "validated_policy", spec)
	if p != nil {
		p.ID = ""
	}
	return p, err
}

func (e *Engine) buildPolicy(ctx context.Context, c Caller, name string, spec map[string]any) (*model.Policy, error) {
	ps, err := e.ValidateSpec(ctx, "policy", spec)
	if err != nil {
		return nil, err
	}
	id := e.newID()
	spec, props, err := e.sealSpec(ps.schema, id, spec, ps.Properties)
	if err != nil {
		return nil, err
	}
	return &model.Policy{ID: id, Name: name, Type: ps.Type, Version: ps.Version, Spec: spec, Properties: props,
		Data: map[string]any{}, User: c.User, Project: c.Project, CreatedAt: e.cfg.Now()}, nil
}

// UpdatePolicy renames a policy.
func (e *Engine) UpdatePolicy(ctx context.Context, c Caller, ident string, name *string) (*model.Policy, error) {
	p, err := e.store.FindPolicy(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	if name == nil {
		return nil, BadRequest("name is required: only a policy's name can be updated.")
	}
	if _, err := e.checkRename(ctx, "policy", p.Name, name, c.Project); err != nil {
		return nil, err
	}
	p.Name = *name
	now := e.cfg.Now()
	p.UpdatedAt = &now
	return p, e.store.UpdatePolicy(ctx, p)
}

// DeletePolicy deletes a policy that is not attached to any cluster.
func (e *Engine) DeletePolicy(ctx context.Context, c Caller, ident string) error {
	p, err := e.store.FindPolicy(ctx, c.Project, ident)
	if err != nil {
		return err
	}
	return e.deleteUnused(ctx, "policy", p.ID, store.Store.PolicyInUse, store.Store.DeletePolicy,
		fmt.Sprintf("The policy '%s' cannot be deleted: it is attached to a cluster, or being attached; detach it first.", p.Name))
}
