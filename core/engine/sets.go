package engine

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/store"
)

// SetObjects lists what a definition set of the caller's project owns.
func (e *Engine) SetObjects(ctx context.Context, c Caller, set string) ([]store.SetObject, error) {
	return e.store.SetObjects(ctx, c.Project, set)
}

// OwnerOf returns the set owning an object of the caller's project, or nil:
// another project's ownership records are not shown, as its objects are not.
func (e *Engine) OwnerOf(ctx context.Context, c Caller, kind, id string) (*store.SetObject, error) {
	o, err := e.store.OwnerOf(ctx, kind, id)
	if err != nil || o == nil || o.Project != c.Project {
		return nil, err
	}
	return o, nil
}

var setKinds = []string{"profile", "policy", "cluster"}

// ClaimObject records that a definition set owns an object. An object owned
// by another set is refused: apply must not take over what it did not make.
func (e *Engine) ClaimObject(ctx context.Context, c Caller, set, kind, name, id string) error {
	if err := e.checkSetRef(set, kind); err != nil {
		return err
	}
	var err error
	switch kind {
	case "profile":
		_, err = e.store.FindProfile(ctx, c.Project, id)
	case "policy":
		_, err = e.store.FindPolicy(ctx, c.Project, id)
	case "cluster":
		_, err = e.store.FindCluster(ctx, c.Project, id)
	}
	if err != nil {
		return err
	}
	owner, err := e.store.OwnerOf(ctx, kind, id)
	if err != nil {
		return err
	}
	// An object of the caller's project is owned by another project's set
	// only if a store was written before sets had projects; it is not
	// named, only refused.
	if owner != nil && (owner.Set != set || owner.Project != c.Project) {
		if owner.Project != c.Project {
			return Conflict("ResourceInUse", "The %s is owned by a definition set of another project.", kind)
		}
		return Conflict("ResourceInUse", "The %s %q is owned by definition set %q; a set does not take over another set's objects.", kind, owner.Name, owner.Set)
	}
	return e.store.PutSetObject(ctx, store.SetObject{Project: c.Project, Set: set, Kind: kind, Name: name, ID: id})
}

// ReleaseObject forgets that a set of the caller's project owns an object.
func (e *Engine) ReleaseObject(ctx context.Context, c Caller, set, kind, id string) error {
	if err := e.checkSetRef(set, kind); err != nil {
		return err
	}
	owner, err := e.store.OwnerOf(ctx, kind, id)
	if err != nil {
		return err
	}
	if owner == nil || owner.Set != set || owner.Project != c.Project {
		return &Error{Status: http.StatusNotFound, Type: "ResourceNotFound", Message: fmt.Sprintf("The definition set %q does not own %s %s.", set, kind, id)}
	}
	return e.store.DeleteSetObject(ctx, kind, id)
}

func (e *Engine) checkSetRef(set, kind string) error {
	if !slices.Contains(setKinds, kind) {
		return BadRequest("kind %q is not one of %s.", kind, strings.Join(setKinds, ", "))
	}
	if set == "" {
		return BadRequest("The definition set name is required.")
	}
	return nil
}

// validateSettings applies the orchestration settings rules to a config.
func validateSettings(config map[string]any) error {
	errs := api.ValidateSettings(config)
	if len(errs) == 0 {
		return nil
	}
	msgs := make([]string, len(errs))
	for i, e := range errs {
		msgs[i] = e.Error()
	}
	return BadRequest("config: %s", strings.Join(msgs, "; "))
}
