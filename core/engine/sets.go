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

// SetObjects lists what a definition set owns.
func (e *Engine) SetObjects(ctx context.Context, set string) ([]store.SetObject, error) {
	return e.store.SetObjects(ctx, set)
}

// OwnerOf returns the set owning an object, or nil.
func (e *Engine) OwnerOf(ctx context.Context, kind, id string) (*store.SetObject, error) {
	return e.store.OwnerOf(ctx, kind, id)
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
	if owner != nil && owner.Set != set {
		return Conflict("ResourceInUse", "The %s %q is owned by definition set %q; a set does not take over another set's objects.", kind, owner.Name, owner.Set)
	}
	return e.store.PutSetObject(ctx, store.SetObject{Set: set, Kind: kind, Name: name, ID: id})
}

// ReleaseObject forgets that a set owns an object.
func (e *Engine) ReleaseObject(ctx context.Context, set, kind, id string) error {
	if err := e.checkSetRef(set, kind); err != nil {
		return err
	}
	owner, err := e.store.OwnerOf(ctx, kind, id)
	if err != nil {
		return err
	}
	if owner == nil || owner.Set != set {
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
