package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Caller is who makes a request.
type Caller struct {
	User    string
	Project string
	Admin   bool
}

// --- specs

// ParsedSpec is a profile or policy spec after validation.
type ParsedSpec struct {
	Type       string
	Version    string
	Properties map[string]any
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
	return &ParsedSpec{Type: typ, Version: version, Properties: normalised}, nil
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
	return &model.Profile{ID: e.newID(), Name: name, Type: ps.Type, Version: ps.Version, Spec: spec, Properties: ps.Properties,
		Metadata: metadata, User: c.User, Project: c.Project, CreatedAt: e.cfg.Now()}, nil
}

// unique refuses a second cluster with the same name in a project: clusters
// are tracked by name (HCL, Terraform import, the CLI). Profiles and
// policies may share names, as in Senlin: their specs are immutable, so a
// replacement is created beside the old one (Terraform's
// create_before_destroy) before the old one goes; looking them up by an
// ambiguous name is answered with a clear error.
func (e *Engine) unique(ctx context.Context, kind, name, project string) error {
	var err error
	switch kind {
	case "profile":
		_, err = e.store.FindProfile(ctx, project, name)
	case "policy":
		_, err = e.store.FindPolicy(ctx, project, name)
	case "cluster":
		_, err = e.store.FindCluster(ctx, project, name)
	}
	var amb *store.AmbiguousError
	if err == nil || errors.As(err, &amb) {
		return Conflict("ResourceInUse", "A %s named %q already exists; names must be unique within a project.", kind, name)
	}
	if !errors.Is(err, store.ErrNotFound) {
		return err
	}
	return nil
}

// checkRename validates a new name for an object of a kind (unique for
// clusters); it returns false when the name does not change.
func (e *Engine) checkRename(ctx context.Context, kind, current string, name *string, project string) (bool, error) {
	if name == nil || *name == current {
		return false, nil
	}
	if err := model.ValidateName("name", *name); err != nil {
		return false, BadRequest("%s", err)
	}
	if kind != "cluster" {
		return true, nil
	}
	return true, e.unique(ctx, kind, *name, project)
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
	used, err := e.store.ProfileInUse(ctx, p.ID)
	if err != nil {
		return err
	}
	if used {
		return Conflict("ResourceInUse", "The profile '%s' cannot be deleted: it is still used by a cluster or node.", p.Name)
	}
	return e.store.DeleteProfile(ctx, p.ID)
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
	return &model.Policy{ID: e.newID(), Name: name, Type: ps.Type, Version: ps.Version, Spec: spec, Properties: ps.Properties,
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
	used, err := e.store.PolicyInUse(ctx, p.ID)
	if err != nil {
		return err
	}
	if used {
		return Conflict("ResourceInUse", "The policy '%s' cannot be deleted: it is still attached to a cluster; detach it first.", p.Name)
	}
	return e.store.DeletePolicy(ctx, p.ID)
}

// --- actions

// newAction builds an action of a kind with its typed inputs (the
// model.*Inputs of the kind), stored as their JSON document.
func (e *Engine) newAction(c Caller, name, target, clusterID string, inputs any, timeout int) (*model.Action, error) {
	id := e.newID()
	doc, err := document(inputs)
	if err != nil {
		return nil, fmt.Errorf("encode the inputs of %s: %w", name, err)
	}
	if timeout <= 0 {
		timeout = e.cfg.DefaultTimeout
	}
	return &model.Action{ID: id, Name: actionName(name, target) + "_" + id[:8], ClusterID: clusterID, Target: target, Action: name,
		Cause: model.CauseRPC, Status: model.ActionReady, StatusReason: "The action is ready to run.", Timeout: timeout, Inputs: doc,
		Outputs: map[string]any{}, Data: map[string]any{}, User: c.User, Project: c.Project, CreatedAt: e.cfg.Now()}, nil
}

func actionName(action, target string) string {
	switch action {
	case model.ClusterAttachPolicyAction:
		return "attach_policy"
	case model.ClusterDetachPolicyAction:
		return "detach_policy"
	case model.ClusterUpdatePolicyAction:
		return "update_policy"
	}
	return strings.ToLower(action)
}

// submit stores the action (and whatever fn writes) in one transaction,
// refusing it when another action is already active on the target, or when
// the plugin behind the profile it needs is unhealthy.
func (e *Engine) submit(ctx context.Context, a *model.Action, force bool, profileID string, fn func(tx store.Store) error) error {
	if profileID != "" {
		prof, err := e.store.GetProfile(ctx, profileID)
		if err != nil {
			return err
		}
		if err := e.plugins.Health("profile", prof.Type); err != nil {
			return fmt.Errorf("The %s cannot be changed now: %w.", map[bool]string{true: "node", false: "cluster"}[a.IsNodeAction()], err)
		}
	}
	err := e.store.InTx(ctx, func(tx store.Store) error {
		if !force {
			active, err := tx.ActiveActions(ctx, a.Target)
			if err != nil {
				return err
			}
			if len(active) > 0 {
				return Conflict("ActionConflict", "The %s is busy with action %s (%s); wait for it to finish or cancel it.",
					map[bool]string{true: "node", false: "cluster"}[a.IsNodeAction()], active[0].Name, active[0].ID)
			}
		}
		if fn != nil {
			if err := fn(tx); err != nil {
				return err
			}
		}
		return tx.CreateActions(ctx, []*model.Action{a})
	})
	if err != nil {
		return err
	}
	e.wake()
	return nil
}

// ClusterCreate is a cluster create request.
type ClusterCreate struct {
	Name            string
	Profile         string
	DesiredCapacity *int
	MinSize         *int
	MaxSize         *int
	Timeout         *int
	Metadata        map[string]any
	Config          map[string]any
}

// CreateCluster validates a cluster and queues its creation.
func (e *Engine) CreateCluster(ctx context.Context, c Caller, req ClusterCreate) (*model.Cluster, *model.Action, error) {
	if err := model.ValidateName("name", req.Name); err != nil {
		return nil, nil, BadRequest("%s", err)
	}
	if req.Profile == "" {
		return nil, nil, BadRequest("profile_id is required.")
	}
	if err := inRange("desired_capacity", req.DesiredCapacity, 0, MaxCount); err != nil {
		return nil, nil, err
	}
	if err := inRange("min_size", req.MinSize, 0, MaxCount); err != nil {
		return nil, nil, err
	}
	if err := inRange("max_size", req.MaxSize, -1, MaxCount); err != nil {
		return nil, nil, err
	}
	if err := inRange("timeout", req.Timeout, 0, MaxTimeout); err != nil {
		return nil, nil, err
	}
	if err := validateSettings(req.Config); err != nil {
		return nil, nil, err
	}
	profile, err := e.store.FindProfile(ctx, c.Project, req.Profile)
	if err != nil {
		return nil, nil, bodyRef("profile_id", err)
	}
	desired := 0
	switch {
	case req.DesiredCapacity != nil:
		desired = *req.DesiredCapacity
	case req.MinSize != nil:
		desired = *req.MinSize
	}
	if msg := scaling.CheckSizeParams(nil, &desired, req.MinSize, req.MaxSize, true, e.cfg.MaxNodesPerCluster); msg != "" {
		return nil, nil, BadRequest("%s", msg)
	}
	if err := e.unique(ctx, "cluster", req.Name, c.Project); err != nil {
		return nil, nil, err
	}
	cl := &model.Cluster{ID: e.newID(), Name: req.Name, ProfileID: profile.ID, User: c.User, Project: c.Project, InitAt: e.cfg.Now(),
		MinSize: deref(req.MinSize, 0), MaxSize: deref(req.MaxSize, -1), DesiredCapacity: desired, NextIndex: 1,
		Timeout: deref(req.Timeout, e.cfg.DefaultTimeout), Status: model.ClusterInit, StatusReason: "Initializing",
		Metadata: orEmpty(req.Metadata), Data: map[string]any{}, Config: orEmpty(req.Config), Dependents: map[string]any{}}
	a, err := e.newAction(c, model.ClusterCreateAction, cl.ID, cl.ID, model.ClusterCreateInputs{}, cl.Timeout)
	if err != nil {
		return nil, nil, err
	}
	if err := e.submit(ctx, a, true, profile.ID, func(tx store.Store) error { return tx.CreateCluster(ctx, cl) }); err != nil {
		return nil, nil, err
	}
	return cl, a, nil
}

// ClusterUpdate is a cluster update request; nil fields are unchanged.
type ClusterUpdate struct {
	Name            *string
	Profile         *string
	ProfileOnly     bool
	Metadata        map[string]any
	Timeout         *int
	Config          map[string]any
	DesiredCapacity *int
	MinSize         *int
	MaxSize         *int
}

// UpdateCluster validates an update and queues it.
func (e *Engine) UpdateCluster(ctx context.Context, c Caller, ident string, req ClusterUpdate) (*model.Cluster, *model.Action, error) {
	cl, err := e.store.FindCluster(ctx, c.Project, ident)
	if err != nil {
		return nil, nil, err
	}
	if cl.Status == model.ClusterError && req.Profile != nil {
		return nil, nil, Conflict("FeatureNotSupported", "The cluster '%s' is in ERROR status; a profile update is not supported until it is recovered.", cl.Name)
	}
	var in model.ClusterUpdateInputs
	renamed, err := e.checkRename(ctx, "cluster", cl.Name, req.Name, c.Project)
	if err != nil {
		return nil, nil, err
	}
	if renamed {
		in.Name = req.Name
	}
	if req.Metadata != nil {
		in.Metadata = req.Metadata
	}
	if req.Config != nil {
		merged := maps.Clone(cl.Config)
		if merged == nil {
			merged = map[string]any{}
		}
		maps.Copy(merged, req.Config)
		if err := validateSettings(merged); err != nil {
			return nil, nil, err
		}
		in.Config = req.Config
	}
	if req.Timeout != nil {
		if err := inRange("timeout", req.Timeout, 0, MaxTimeout); err != nil {
			return nil, nil, err
		}
		if *req.Timeout != cl.Timeout {
			in.Timeout = req.Timeout
		}
	}
	if req.Profile != nil {
		np, err := e.store.FindProfile(ctx, c.Project, *req.Profile)
		if err != nil {
			return nil, nil, bodyRef("profile_id", err)
		}
		if np.ID != cl.ProfileID {
			old, err := e.store.GetProfile(ctx, cl.ProfileID)
			if err != nil {
				return nil, nil, err
			}
			if old.Type != np.Type {
				return nil, nil, BadRequest("profile_id: the new profile has type %s but the cluster's nodes are %s; a cluster keeps its profile type.", np.Type, old.Type)
			}
			in.NewProfileID, in.ProfileOnly = np.ID, &req.ProfileOnly
		}
	}
	if req.DesiredCapacity != nil || req.MinSize != nil || req.MaxSize != nil {
		if err := inRange("desired_capacity", req.DesiredCapacity, 0, MaxCount); err != nil {
			return nil, nil, err
		}
		if err := inRange("min_size", req.MinSize, 0, MaxCount); err != nil {
			return nil, nil, err
		}
		if err := inRange("max_size", req.MaxSize, -1, MaxCount); err != nil {
			return nil, nil, err
		}
		b := scaling.Bounds{Desired: cl.DesiredCapacity, Min: cl.MinSize, Max: cl.MaxSize}
		if msg := scaling.CheckSizeParams(&b, req.DesiredCapacity, req.MinSize, req.MaxSize, true, e.cfg.MaxNodesPerCluster); msg != "" {
			return nil, nil, BadRequest("%s", msg)
		}
		in.Size = &model.SizeInputs{DesiredCapacity: req.DesiredCapacity, MinSize: req.MinSize, MaxSize: req.MaxSize}
	}
	if reflect.ValueOf(in).IsZero() {
		return nil, nil, BadRequest("No property needs an update.")
	}
	a, err := e.newAction(c, model.ClusterUpdateAction, cl.ID, cl.ID, in, cl.Timeout)
	if err != nil {
		return nil, nil, err
	}
	if err := e.submit(ctx, a, false, cl.ProfileID, nil); err != nil {
		return nil, nil, err
	}
	return cl, a, nil
}

// DeleteCluster queues a cluster's deletion.
func (e *Engine) DeleteCluster(ctx context.Context, c Caller, ident string, force bool) (*model.Action, error) {
	cl, err := e.store.FindCluster(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	if !force && slices.Contains([]string{model.ClusterCreating, model.ClusterUpdating, model.ClusterDeleting, model.ClusterRecovering}, cl.Status) {
		return nil, Conflict("ActionInProgress", "The cluster '%s' is in status %s; wait for it to finish or delete with force.", cl.Name, cl.Status)
	}
	if deps, _ := cl.Dependents["profiles"].([]any); len(deps) > 0 {
		return nil, Conflict("ResourceInUse", "The cluster '%s' hosts other profiles' nodes and cannot be deleted.", cl.Name)
	}
	a, err := e.newAction(c, model.ClusterDeleteAction, cl.ID, cl.ID, model.ClusterDeleteInputs{Force: force}, cl.Timeout)
	if err != nil {
		return nil, err
	}
	return a, e.submit(ctx, a, true, cl.ProfileID, nil)
}

// CancelAction cancels an action that has not ended. With force it is marked
// cancelled at once, with its children, and its locks are released.
func (e *Engine) CancelAction(ctx context.Context, c Caller, ident string, force bool) (*model.Action, error) {
	a, err := e.store.FindAction(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	if a.Terminal() {
		return nil, Conflict("ActionImmutable", "The action '%s' is already %s and cannot be cancelled.", a.ID, a.Status)
	}
	now := e.cfg.Now()
	a.Control = model.SignalCancel
	immediate := force || a.Status == model.ActionReady || a.Status == model.ActionInit
	err = e.store.InTx(ctx, func(tx store.Store) error {
		cur, err := tx.GetAction(ctx, a.ID)
		if err != nil {
			return err
		}
		cur.Control = model.SignalCancel
		if immediate || cur.Status == model.ActionReady {
			cur.Status, cur.StatusReason, cur.EndTime = model.ActionCancelled, "The action was cancelled.", float64(now.UnixMicro())/1e6
		}
		*a = *cur
		if err := tx.UpdateActions(ctx, []*model.Action{cur}); err != nil {
			return err
		}
		return tx.SignalChildren(ctx, a.ID, model.SignalCancel, now)
	})
	if err != nil {
		return nil, err
	}
	if a.Status == model.ActionCancelled {
		if !a.IsNodeAction() {
			// No worker will finish this action, so settle its cluster
			// here as finish would: a creation cancelled before it ran
			// leaves its cluster ERROR, not INIT.
			sctx, cancel := detached(ctx)
			e.unstick(sctx, a)
			cancel()
		}
		_ = e.store.ReleaseClusterLock(ctx, a.ClusterID, a.ID)
		_ = e.store.ReleaseNodeLock(ctx, a.Target, a.ID)
		e.event(ctx, a, "error", a.StatusReason, model.LevelWarning)
	}
	e.mu.Lock()
	cancel := e.running[a.ID]
	e.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	return a, nil
}

// --- helpers

// Numeric bounds of the API, shared with the client side (api.MaxTimeout,
// api.MaxCount) so that `grove validate` applies the same rules.
const (
	// MaxTimeout is the largest action or cluster timeout, in seconds.
	MaxTimeout = api.MaxTimeout
	// MaxCount is the largest size, count, adjustment or priority.
	MaxCount = api.MaxCount
)

// inRange checks an optional integer field against [min, max].
func inRange(field string, v *int, min, max int) error {
	if v != nil && (*v < min || *v > max) {
		return RangeError(field, min, max, strconv.Itoa(*v))
	}
	return nil
}

// RangeError is the 400 for a number outside its field's range; got is the
// number as the client sent it.
func RangeError(field string, min, max int, got string) error {
	switch min {
	case 0:
		return BadRequest("%s must be a non-negative integer of at most %d, got %s.", field, max, got)
	case 1:
		return BadRequest("%s must be a positive integer of at most %d, got %s.", field, max, got)
	}
	return BadRequest("%s must be at least %d and at most %d, got %s.", field, min, max, got)
}

// FormatNumber writes a JSON number for an error message: whole numbers
// in full (18446744074, not 1.8446744074e+10), others as Go reads them.
func FormatNumber(f float64) string {
	if f == math.Trunc(f) && math.Abs(f) < 1e21 {
		return strconv.FormatFloat(f, 'f', 0, 64)
	}
	return strconv.FormatFloat(f, 'g', -1, 64)
}

// intParam reads an integer action parameter (a number or numeric string)
// and checks its range before converting it.
func intParam(field string, v any, min, max int) (int, error) {
	f, err := scaling.Float(v)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, RangeError(field, min, max, quoteValue(v))
	}
	if f != math.Trunc(f) || f < float64(min) || f > float64(max) {
		return 0, RangeError(field, min, max, FormatNumber(f))
	}
	return int(f), nil
}

func quoteValue(v any) string {
	if s, ok := v.(string); ok {
		return strconv.Quote(s)
	}
	if f, ok := v.(float64); ok {
		return FormatNumber(f)
	}
	return fmt.Sprint(v)
}

// bodyRef turns a failed lookup of an id given in a request body into a 400
// that names the field, as Senlin does.
func bodyRef(field string, err error) error {
	var nf *store.NotFoundError
	var amb *store.AmbiguousError
	var bad *store.InvalidRefError
	switch {
	case errors.As(err, &nf):
		return BadRequest("%s: %s", field, nf.Error())
	case errors.As(err, &amb):
		return BadRequest("%s: %s", field, amb.Error())
	case errors.As(err, &bad):
		return BadRequest("%s: %s", field, bad.Error())
	}
	return err
}

func deref(v *int, def int) int {
	if v == nil {
		return def
	}
	return *v
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return maps.Clone(m)
}
