package engine

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"strconv"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// Caller is who makes a request: the token that authenticated it, its
// project and its role. User is what every object, action and event the
// request writes records as its user (the audit trail): a token's id, "dev"
// for dev mode's trusted loopback callers, "admin_token" for the legacy
// static token.
type Caller struct {
	User    string
	Project string
	// Role is model.RoleReader, RoleMember or RoleAdmin; empty for the
	// engine's own work (health restarts, child actions), which is never
	// checked against a role.
	Role string
}

// IsAdmin reports whether the caller is an admin.
func (c Caller) IsAdmin() bool { return c.Role == model.RoleAdmin }

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

// --- actions

// newAction builds an action of a kind with its typed inputs (the
// model.*Inputs of the kind), stored as their JSON document.
func (e *Engine) newAction(c Caller, name, target, clusterID string, inputs any, timeout int) (*model.Action, error) {
	id := e.rowID()
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
		if profileID != "" {
			// Held until the action is stored: a deletion of the profile
			// waits for it, and then finds the profile in use.
			if err := tx.LockSpec(ctx, "profile", profileID, false); err != nil {
				return err
			}
		}
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

// lockNewProfile is submit's step for an update that moves nodes to
// another profile: the profile is held while the action is stored, as the
// current one is (LockSpec), and from then on the action under way
// keeps it in use. Nil when the update keeps the profile.
func lockNewProfile(ctx context.Context, id string) func(tx store.Store) error {
	if id == "" {
		return nil
	}
	return func(tx store.Store) error { return tx.LockSpec(ctx, "profile", id, false) }
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

func configString(cfg map[string]any, key string) string {
	s, _ := cfg[key].(string)
	return s
}
