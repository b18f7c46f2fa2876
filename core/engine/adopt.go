package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// MaxIdentityChars bounds an adoption's identity (a container id or name,
// a pid).
const MaxIdentityChars = 255

// NodeAdopt is Senlin's adopt and adopt-preview request (microversion
// 1.7).
type NodeAdopt struct {
	// Identity names the existing resource to its driver.
	Identity string
	// Type is the profile type and version, as Senlin writes it
	// ("container.docker-1.0"); without a version the type's newest.
	Type string
	// Name, Role and Metadata are the new node's (adopt only).
	Name, Role string
	Metadata   map[string]any
	// Overrides replace properties the driver reported, key by key.
	Overrides map[string]any
	// Snapshot is Senlin's request to snapshot the resource first and make
	// the profile from the snapshot (sdk.AdoptRequest.Snapshot): a Nova
	// server's image becomes a snapshot of it, a vSphere VM gets a
	// template cloned from it. A preview creates nothing and ignores it.
	Snapshot bool
}

// splitType reads "container.docker-1.0" as the type and its version, and
// "container.docker" as the type at its newest version.
func (e *Engine) splitType(full string) (string, string, error) {
	if full == "" {
		return "", "", BadRequest("type is required: the profile type of the resource, such as container.docker-1.0 or local.process-1.0.")
	}
	typ, version := full, ""
	if c, ok := e.plugins.Component("profile", full); ok {
		version = c.Versions[len(c.Versions)-1]
	} else if i := strings.LastIndexByte(full, '-'); i > 0 {
		typ, version = full[:i], full[i+1:]
	}
	if _, ok := e.plugins.Component("profile", typ); !ok {
		var known []string
		for _, c := range e.plugins.Components("profile") {
			known = append(known, c.Type)
		}
		return "", "", BadRequest("type: the profile type %q is not provided by any plugin; known types are %s.", full, strings.Join(known, ", "))
	}
	return typ, version, nil
}

// describe asks the driver of the request's type for the resource's
// properties (and, with node set, its node result), merges the overrides
// and validates the spec the properties make.
func (e *Engine) describe(ctx context.Context, c Caller, req NodeAdopt, node *sdk.Node) (*ParsedSpec, map[string]any, sdk.Adoption, error) {
	var none sdk.Adoption
	if req.Identity == "" {
		return nil, nil, none, BadRequest("identity is required: what names the resource to its driver (a container id or name, a pid).")
	}
	if n := len([]rune(req.Identity)); n > MaxIdentityChars {
		return nil, nil, none, BadRequest("identity must be at most %d characters, got %d.", MaxIdentityChars, n)
	}
	typ, version, err := e.splitType(req.Type)
	if err != nil {
		return nil, nil, none, err
	}
	// A type that reaches the agent's host needs its grant before the
	// driver is even asked: adopting a process lets Grove signal it.
	if err := e.checkHostAccess(ctx, c.Project, typ, nil); err != nil {
		return nil, nil, none, err
	}
	comp, _ := e.plugins.Component("profile", typ)
	if comp.APIVersion != "" && apiBefore(comp.APIVersion, sdk.ProfileAPIAdopt) {
		return nil, nil, none, Conflict("FeatureNotSupported", "The plugin %s serving %s speaks profile API %s, which has no node adoption (API %s); update the plugin.",
			comp.Plugin, typ, comp.APIVersion, sdk.ProfileAPIAdopt)
	}
	areq := sdk.AdoptRequest{Type: typ, Version: version, Identity: req.Identity, Preview: node == nil, Snapshot: req.Snapshot && node != nil}
	if node != nil {
		areq.Node = *node
	}
	var got sdk.Adoption
	err = e.plugins.Call(ctx, "profile", typ, func(ctx context.Context, client *sdk.Client) (err error) {
		got, err = client.Adopt(ctx, areq)
		return err
	})
	if status.Code(err) == codes.Unimplemented {
		return nil, nil, none, BadRequest("The profile type %s cannot adopt existing resources: its driver cannot describe them.", typ)
	}
	if _, ok := errors.AsType[*sdk.PluginError](err); ok {
		return nil, nil, none, BadRequest("Cannot adopt %q as %s: %v", req.Identity, typ, err)
	}
	if err != nil {
		return nil, nil, none, fmt.Errorf("adopt %q as %s: %w", req.Identity, typ, err)
	}
	props := maps.Clone(got.Properties)
	if props == nil {
		props = map[string]any{}
	}
	maps.Copy(props, req.Overrides)
	spec := map[string]any{"type": typ, "version": version, "properties": props}
	ps, err := e.ValidateSpec(ctx, "profile", spec)
	if err != nil {
		return nil, nil, none, err
	}
	if err := e.checkHostAccess(ctx, c.Project, ps.Type, ps.Properties); err != nil {
		return nil, nil, none, err
	}
	return ps, spec, got, nil
}

// AdoptPreview is Senlin's adopt-preview: the profile spec that describes
// the resource, as {type, version, properties}, its sensitive values
// redacted.
func (e *Engine) AdoptPreview(ctx context.Context, c Caller, req NodeAdopt) (map[string]any, error) {
	ps, _, _, err := e.describe(ctx, c, req, nil)
	if err != nil {
		return nil, err
	}
	sealed, err := e.sealProps(ps.schema, "preview", ps.Properties)
	if err != nil {
		return nil, err
	}
	return map[string]any{"type": ps.Type, "version": ps.Version, "properties": Redact(sealed)}, nil
}

// AdoptNode is Senlin's adopt: the resource becomes an orphan node, ACTIVE,
// with a profile made from what its driver reported (named prof-<node>),
// managed from then on like any node: checked, operated on, deleted.
func (e *Engine) AdoptNode(ctx context.Context, c Caller, req NodeAdopt) (*model.Node, error) {
	if req.Name == "" {
		req.Name = "node-" + e.newID()[:8]
	}
	if err := model.ValidateName("name", req.Name); err != nil {
		return nil, BadRequest("%s", err)
	}
	if err := model.ValidateNodeRole("role", req.Role); err != nil {
		return nil, BadRequest("%s", err)
	}
	id := e.rowID()
	ps, spec, got, err := e.describe(ctx, c, req, &sdk.Node{ID: id, Name: req.Name, Index: -1})
	if err != nil {
		return nil, err
	}
	prof, err := e.buildProfile(ctx, c, "prof-"+req.Name, spec, nil)
	if err != nil {
		return nil, err
	}
	now := e.cfg.Now()
	n := &model.Node{ID: id, Name: req.Name, ProfileID: prof.ID, PhysicalID: got.Result.PhysicalID, User: c.User, Project: c.Project,
		Index: -1, Role: req.Role, InitAt: now, CreatedAt: &now, Status: model.NodeActive, StatusReason: "Node adopted successfully",
		Data: orEmpty(got.Result.Data), Metadata: orEmpty(req.Metadata), Dependents: map[string]any{}, State: got.Result.State}
	if hostLocal(ps.Type) {
		// This agent's plugin found the resource.
		n.Host = e.cfg.HostName
		if n.Host != "" {
			n.Data["host"] = n.Host
		}
	}
	ev := &model.Event{ID: e.rowID(), Timestamp: now, OID: n.ID, OName: n.Name, OType: "NODE", User: c.User, Project: c.Project,
		Action: "NODE_ADOPT", Status: "end", StatusReason: fmt.Sprintf("Node adopted from %s %q.", ps.Type, req.Identity),
		Level: model.LevelInfo, MetaData: map[string]any{}}
	err = e.store.InTx(ctx, func(tx store.Store) error {
		if err := tx.CreateProfile(ctx, prof); err != nil {
			return err
		}
		if err := tx.CreateNodes(ctx, []*model.Node{n}); err != nil {
			return err
		}
		return tx.CreateEvents(ctx, []*model.Event{ev})
	})
	if err != nil {
		return nil, err
	}
	return n, nil
}
