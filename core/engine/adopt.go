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
	areq := sdk.AdoptRequest{Type: typ, Version: version, Identity: req.Identity, Preview: true}
	got, err := e.callAdopt(ctx, areq)
	if err != nil {
		return nil, nil, none, err
	}
	// A driver that names the resource's physical id in a preview lets a
	// resource some node already holds be refused before an adoption
	// changes anything (a process's runtime record, a Nova snapshot); the
	// adoption checks again when it records the node.
	if err := e.checkUnowned(ctx, e.store, c, typ, req.Identity, got.Result.PhysicalID); err != nil {
		return nil, nil, none, err
	}
	if node != nil {
		areq.Preview, areq.Snapshot, areq.Node = false, req.Snapshot, *node
		if got, err = e.callAdopt(ctx, areq); err != nil {
			return nil, nil, none, err
		}
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

// callAdopt asks the driver of areq's type to describe the resource.
func (e *Engine) callAdopt(ctx context.Context, areq sdk.AdoptRequest) (sdk.Adoption, error) {
	var got sdk.Adoption
	err := e.plugins.Call(ctx, "profile", areq.Type, func(ctx context.Context, client *sdk.Client) (err error) {
		got, err = client.Adopt(ctx, areq)
		return err
	})
	if status.Code(err) == codes.Unimplemented {
		return got, BadRequest("The profile type %s cannot adopt existing resources: its driver cannot describe them.", areq.Type)
	}
	if _, ok := errors.AsType[*sdk.PluginError](err); ok {
		return got, BadRequest("Cannot adopt %q as %s: %v", areq.Identity, areq.Type, err)
	}
	if err != nil {
		return got, fmt.Errorf("adopt %q as %s: %w", areq.Identity, areq.Type, err)
	}
	return got, nil
}

// checkUnowned refuses a physical id that a node of the profile type typ
// already holds, in any project: two nodes on one resource would both
// act on it, and deleting either destroys the other's resource. An empty
// physical id (a driver that does not name it in a preview) is not
// checked. A node whose profile cannot be found is counted as an owner:
// refusing is the safe mistake.
func (e *Engine) checkUnowned(ctx context.Context, st store.Store, c Caller, typ, identity, physicalID string) error {
	if physicalID == "" {
		return nil
	}
	holders, err := st.PhysicalHolders(ctx, []string{physicalID})
	if err != nil {
		return err
	}
	for _, h := range holders {
		if h.ProfileType != "" && h.ProfileType != typ {
			continue
		}
		if h.Project != c.Project && !c.IsAdmin() {
			return Conflict("ResourceInUse", "The %s resource %q (physical id %s) is already a node of another project; a resource cannot be adopted twice.", typ, identity, physicalID)
		}
		return Conflict("ResourceInUse", "The %s resource %q (physical id %s) is already node %s (id %s); a resource cannot be adopted twice.", typ, identity, physicalID, h.Name, h.NodeID)
	}
	return nil
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
		// Checked again where the node is recorded: two adoptions of one
		// resource that both passed the preview's check meet here, one
		// after the other.
		if err := e.checkUnowned(ctx, tx, c, ps.Type, req.Identity, n.PhysicalID); err != nil {
			return err
		}
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
