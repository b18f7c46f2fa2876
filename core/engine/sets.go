package engine

import (
	"context"
	"errors"
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
// ref is the object's id, short id or name.
func (e *Engine) OwnerOf(ctx context.Context, c Caller, kind, ref string) (*store.SetObject, error) {
	if !slices.Contains(setKinds, kind) {
		return nil, BadRequest("kind %q is not one of %s.", kind, strings.Join(setKinds, ", "))
	}
	id, err := e.recordedObjectID(ctx, c, kind, ref)
	if err != nil {
		return nil, err
	}
	o, err := e.store.OwnerOf(ctx, kind, id)
	if err != nil || o == nil || o.Project != c.Project {
		return nil, err
	}
	return o, nil
}

var setKinds = []string{"profile", "policy", "cluster"}

// setObjectID resolves ref, an id, short id or name as every reference
// is, to the id of the caller's object of kind. Ownership is recorded and
// looked up by that id: by the string as given, one cluster could be
// claimed by three sets under its id, short id and name, and a name would
// find the claim on another project's object of that name.
func (e *Engine) setObjectID(ctx context.Context, c Caller, kind, ref string) (string, error) {
	switch kind {
	case "profile":
		p, err := e.store.FindProfile(ctx, c.Project, ref)
		if err != nil {
			return "", err
		}
		return p.ID, nil
	case "policy":
		p, err := e.store.FindPolicy(ctx, c.Project, ref)
		if err != nil {
			return "", err
		}
		return p.ID, nil
	}
	cl, err := e.store.FindCluster(ctx, c.Project, ref)
	if err != nil {
		return "", err
	}
	return cl.ID, nil
}

// recordedObjectID is the id an ownership record of the object ref names
// is kept under: setObjectID's, or ref itself when it names no object, since
// a record outlives its object (it is not removed with it) and is then
// named by the id it holds.
func (e *Engine) recordedObjectID(ctx context.Context, c Caller, kind, ref string) (string, error) {
	id, err := e.setObjectID(ctx, c, kind, ref)
	if errors.Is(err, store.ErrNotFound) {
		return ref, nil
	}
	return id, err
}

// ClaimObject records that a definition set owns an object, named by ref
// (its id, short id or name in the caller's project), and returns the
// object's id. Apply claims an object once it exists, so an object that
// does not exist is refused. An object owned by another set is refused:
// apply must not take over what it did not make.
func (e *Engine) ClaimObject(ctx context.Context, c Caller, set, kind, name, ref string) (string, error) {
	if err := e.checkSetRef(set, kind); err != nil {
		return "", err
	}
	id, err := e.setObjectID(ctx, c, kind, ref)
	if err != nil {
		return "", err
	}
	owner, err := e.store.OwnerOf(ctx, kind, id)
	if err != nil {
		return "", err
	}
	// An object of the caller's project is owned by another project's set
	// only if a store was written before sets had projects; it is not
	// named, only refused.
	if owner != nil && (owner.Set != set || owner.Project != c.Project) {
		if owner.Project != c.Project {
			return "", Conflict("ResourceInUse", "The %s is owned by a definition set of another project.", kind)
		}
		return "", Conflict("ResourceInUse", "The %s %q is owned by definition set %q; a set does not take over another set's objects.", kind, owner.Name, owner.Set)
	}
	return id, e.store.PutSetObject(ctx, store.SetObject{Project: c.Project, Set: set, Kind: kind, Name: name, ID: id})
}

// ReleaseObject forgets that a set of the caller's project owns an object,
// named by ref as in ClaimObject. A record whose object is gone is named by
// the id it holds.
func (e *Engine) ReleaseObject(ctx context.Context, c Caller, set, kind, ref string) error {
	if err := e.checkSetRef(set, kind); err != nil {
		return err
	}
	id, err := e.recordedObjectID(ctx, c, kind, ref)
	if err != nil {
		return err
	}
	owner, err := e.store.OwnerOf(ctx, kind, id)
	if err != nil {
		return err
	}
	if owner == nil || owner.Set != set || owner.Project != c.Project {
		return &Error{Status: http.StatusNotFound, Type: "ResourceNotFound", Message: fmt.Sprintf("The definition set %q does not own %s %s.", set, kind, ref)}
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
