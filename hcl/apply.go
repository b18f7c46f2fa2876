package hcl

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"time"

	"github.com/grovehq/grove/api"
)

// ErrStalePlan is returned when a saved plan no longer matches the agent.
var ErrStalePlan = errors.New("the saved plan is stale")

// Applier carries out plans through the API.
type Applier struct {
	Client *api.Client
	// Progress receives a line per step and the actions' progress.
	Progress io.Writer
	// Terminal redraws action progress in place.
	Terminal bool
	// Follow, when set, follows each action to its end instead of the
	// built-in quiet wait: the CLI draws the action's progress with it and
	// tells an interrupted wait apart. It returns the ended action, and an
	// error for a failed action or a wait that did not see the end.
	Follow func(ctx context.Context, what, actionID string) (*api.Action, error)
	// created lists what this apply created, in order.
	created []Created
}

// Created lists the objects the last Apply created, in order.
func (a *Applier) Created() []Created { return a.created }

// Created is an object an apply created on the agent.
type Created struct {
	Ref  Ref
	Name string // the agent's name
	ID   string
	// Owned tells whether the agent records the object as the set's, so
	// that plan, apply and destroy see it.
	Owned bool
}

// PartialError is a failed apply that changed the agent before it failed.
// Created lists the objects it created that remain: those Owned are the
// set's, and a later apply continues from them (destroy removes them); the
// others could be neither recorded nor removed.
type PartialError struct {
	Set     string
	Err     error
	Created []Created
}

func (e *PartialError) Error() string { return e.Err.Error() }

func (e *PartialError) Unwrap() error { return e.Err }

// Report says what the failed apply left on the agent, one object a line.
func (e *PartialError) Report(w io.Writer) {
	if len(e.Created) == 0 {
		fmt.Fprintln(w, "The apply created nothing before it stopped.")
		return
	}
	fmt.Fprintf(w, "The apply stopped after creating these objects, which remain on the agent:\n")
	unowned := false
	for _, c := range e.Created {
		state := fmt.Sprintf("owned by definition set %q", e.Set)
		if !c.Owned {
			state = "NOT recorded as the set's: delete it with `grove " + c.Ref.Kind + " delete " + c.ID + "`"
			unowned = true
		}
		fmt.Fprintf(w, "  %s %s (id %s): %s\n", c.Ref, c.Name, c.ID, state)
	}
	if !unowned {
		fmt.Fprintf(w, "They are the set's: `grove plan` shows what remains to do, `grove apply` continues, and `grove destroy` removes them.\n")
	}
}

// Apply runs a plan: profiles and policies first, clusters in dependency
// order, deletions last (clusters before what they use). It waits for each
// action and stops at the first failure with the action's reason. A plan
// read from a file is refused when the agent changed since it was made.
func (a *Applier) Apply(ctx context.Context, plan *Plan, saved bool) error {
	a.created = nil
	err := a.apply(ctx, plan, saved)
	if err != nil && len(a.created) > 0 {
		return &PartialError{Set: plan.Set, Err: err, Created: a.created}
	}
	return err
}

func (a *Applier) apply(ctx context.Context, plan *Plan, saved bool) error {
	if saved {
		if err := plan.Check(); err != nil {
			return err
		}
		r, err := fetch(ctx, a.Client, plan.Set)
		if err != nil {
			return err
		}
		for _, ref := range plan.Desired.Order {
			name := plan.Desired.agentName(ref)
			if !ownsName(r, ref, name) {
				if err := r.load(ctx, a.Client, ref.Kind, name); err != nil {
					return err
				}
			}
		}
		for _, step := range plan.Changes {
			if step.Action == Delete && step.Ref.Kind == "milestone" {
				if err := r.load(ctx, a.Client, "milestone", step.Name); err != nil {
					return err
				}
			}
		}
		if r.fingerprint() != plan.Fingerprint {
			return fmt.Errorf("%w: the objects of definition set %q changed on the agent since the plan was made; run plan again", ErrStalePlan, plan.Set)
		}
		if err := sameChanges(r, plan); err != nil {
			return err
		}
	}
	// Agent ids of the profiles and policies the desired state uses: those
	// kept as they are, then those this apply creates.
	ids := map[Ref]string{}
	for k, id := range plan.Keep {
		kind, name, _ := strings.Cut(k, ".")
		ids[Ref{Kind: kind, Name: name}] = id
	}
	for _, step := range plan.Changes {
		if step.Action == Adopt {
			a.say("%s: adopting %s", step.Ref, step.Name)
			if err := a.claim(ctx, plan.Set, step.Ref, step.ID); err != nil {
				return err
			}
			continue
		}
		if step.Action == Delete || step.Ref.Kind == "cluster" || step.Ref.Kind == "milestone" {
			continue
		}
		if err := a.spec(ctx, plan, step, ids); err != nil {
			return err
		}
	}
	// Clusters and milestones in the plan's order: a cluster after what its
	// depends_on blocks name, so that each starts once they run, and a
	// milestone after its clusters.
	decls := newDeclarations(plan)
	for _, step := range plan.Changes {
		if step.Action == Delete {
			continue
		}
		var err error
		switch step.Ref.Kind {
		case "cluster":
			if err = a.cluster(ctx, plan, step, ids); err == nil {
				err = decls.done(ctx, a, step.Ref.Name)
			}
		case "milestone":
			err = a.milestone(ctx, plan, step)
		}
		if err != nil {
			return err
		}
	}
	for _, step := range plan.Changes {
		if step.Action == Replace && step.Ref.Kind != "cluster" {
			if err := a.delete(ctx, plan.Set, Change{Action: Delete, Ref: step.Ref, ID: step.ID, Name: step.Old}); err != nil {
				return err
			}
		}
	}
	for _, step := range plan.Changes {
		if step.Action == Delete {
			if err := a.delete(ctx, plan.Set, step); err != nil {
				return err
			}
		}
	}
	return nil
}

// sameChanges refuses a saved plan whose changes are not the ones its
// desired state calls for on the agent it was made against: the fingerprint
// matched, so the agent is as it was, and MakePlan would compute exactly
// these. Anything else (a delete added by hand, a change of another set's
// object, a field edited) is not what the plan showed when it was made.
func sameChanges(r *remote, plan *Plan) error {
	want := diff(r, plan.Desired)
	var have []Change
	for _, c := range plan.Changes {
		if plan.Destroy && c.Action == Delete && c.Ref.Kind == "milestone" {
			// A destroy's milestones come from the definition, not from
			// its (empty) desired state: each must be the agent's
			// milestone of that name, as the fingerprint recorded it.
			if m := r.milestones[c.Ref.Name]; m == nil || m.ID != c.ID || c.Name != c.Ref.Name {
				return fmt.Errorf("%w: it deletes milestone %q (id %s), which is not the agent's milestone of that name; make it again with `grove plan -out`", ErrDamagedPlan, c.Ref.Name, c.ID)
			}
			continue
		}
		have = append(have, c)
	}
	if plan.Keep != nil && !reflect.DeepEqual(plan.Keep, keptIDs(r, plan.Desired)) {
		return fmt.Errorf("%w: the ids it keeps are not the agent's objects its desired state names; make it again with `grove plan -out`", ErrDamagedPlan)
	}
	if !reflect.DeepEqual(normal(want), normal(have)) {
		return fmt.Errorf("%w: its changes are not the ones its desired state calls for on the agent, so it was edited after `grove plan -out` wrote it; make it again with `grove plan -out`", ErrDamagedPlan)
	}
	return nil
}

func (a *Applier) say(format string, args ...any) {
	if a.Progress != nil {
		fmt.Fprintf(a.Progress, format+"\n", args...)
	}
}

func (a *Applier) claim(ctx context.Context, set string, ref Ref, id string) error {
	_, err := a.Client.Do(ctx, http.MethodPut, "/v1/sets/"+url.PathEscape(set)+"/objects/"+ref.Kind+"/"+url.PathEscape(id), nil,
		map[string]any{"object": map[string]any{"name": ref.Name}}, nil)
	if err != nil {
		return fmt.Errorf("record that set %q owns %s: %w", set, ref, err)
	}
	return nil
}

// spec creates (or adopts) a profile or policy, or updates its metadata.
func (a *Applier) spec(ctx context.Context, plan *Plan, step Change, ids map[Ref]string) error {
	name := plan.Desired.agentName(step.Ref)
	if step.Action == Update {
		a.say("%s: updating metadata", step.Ref)
		_, err := a.Client.Do(ctx, http.MethodPatch, "/v1/profiles/"+url.PathEscape(step.ID), nil,
			map[string]any{"profile": map[string]any{"metadata": plan.Desired.Profiles[step.Ref.Name].Metadata}}, nil)
		return err
	}
	body := map[string]any{"name": name}
	coll := "profiles"
	switch step.Ref.Kind {
	case "profile":
		p := plan.Desired.Profiles[step.Ref.Name]
		body["spec"] = map[string]any{"type": p.Type, "version": p.Version, "properties": p.Properties}
		if p.Metadata != nil {
			body["metadata"] = p.Metadata
		}
	case "policy":
		coll = "policies"
		p := plan.Desired.Policies[step.Ref.Name]
		body["spec"] = map[string]any{"type": p.Type, "version": p.Version, "properties": p.Properties}
	}
	a.say("%s: creating %s", step.Ref, name)
	var out map[string]struct {
		ID string `json:"id"`
	}
	_, err := a.Client.Do(ctx, http.MethodPost, "/v1/"+coll, nil, map[string]any{step.Ref.Kind: body}, &out)
	var ae *api.Error
	adopted := false
	if errors.As(err, &ae) && ae.Status == http.StatusConflict {
		// The same content already exists unowned (an earlier apply stopped
		// before recording it): adopt it.
		var existing map[string]struct {
			ID string `json:"id"`
		}
		if _, gerr := a.Client.Do(ctx, http.MethodGet, "/v1/"+coll+"/"+url.PathEscape(name), nil, nil, &existing); gerr != nil {
			return fmt.Errorf("create %s: %w", step.Ref, err)
		}
		out, err, adopted = existing, nil, true
	}
	if err != nil {
		return fmt.Errorf("create %s: %w", step.Ref, err)
	}
	ids[step.Ref] = out[step.Ref.Kind].ID
	if adopted {
		return a.claim(ctx, plan.Set, step.Ref, ids[step.Ref])
	}
	return a.own(ctx, plan.Set, step.Ref, name, ids[step.Ref])
}

// own records a new object as the set's. When that fails, it removes the
// object again rather than leave one no set owns, which plan would not
// show and destroy would not remove; what it can do neither of is kept in
// the list a PartialError reports.
func (a *Applier) own(ctx context.Context, set string, ref Ref, name, id string) error {
	a.created = append(a.created, Created{Ref: ref, Name: name, ID: id})
	c := &a.created[len(a.created)-1]
	err := a.claim(ctx, set, ref, id)
	if err == nil {
		c.Owned = true
		return nil
	}
	// The apply's own context may be what failed: remove with a fresh one.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), rollbackTimeout)
	defer cancel()
	if derr := a.delete(rctx, set, Change{Action: Delete, Ref: ref, ID: id, Name: name}); derr != nil {
		return fmt.Errorf("%w; removing %s again failed too: %w", err, ref, derr)
	}
	a.created = a.created[:len(a.created)-1]
	return fmt.Errorf("%w; %s was removed again", err, ref)
}

// rollbackTimeout bounds removing an object whose ownership could not be
// recorded.
const rollbackTimeout = 2 * time.Minute

func (a *Applier) wait(ctx context.Context, what string, r *api.Response) error {
	id := r.ActionID()
	if id == "" {
		return nil
	}
	var act *api.Action
	var err error
	if a.Follow != nil {
		act, err = a.Follow(ctx, what, id)
	} else {
		act, err = a.Client.WaitAction(ctx, id, func(act *api.Action) {
			if a.Progress == nil {
				return
			}
			if a.Terminal {
				fmt.Fprintf(a.Progress, "\r\033[K  %s: %s %s", what, act.Status, act.StatusReason)
			}
		})
		if a.Terminal && a.Progress != nil {
			fmt.Fprintln(a.Progress)
		}
	}
	if err != nil {
		if act != nil && act.Terminal() {
			return fmt.Errorf("%s failed: %s", what, act.StatusReason)
		}
		return fmt.Errorf("%s: %w", what, err)
	}
	a.say("  %s: done (%s)", what, act.StatusReason)
	return nil
}

func (a *Applier) clusterAction(ctx context.Context, cluster, action string, params map[string]any, what string) error {
	r, err := a.Client.Do(ctx, http.MethodPost, "/v1/clusters/"+url.PathEscape(cluster)+"/actions", nil, map[string]any{action: params}, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return a.wait(ctx, what, r)
}

// specID names a profile or policy of the desired state to the agent: by
// id when the apply knows it, since another object may have the same name
// (two applies that raced), else by its agent name.
func specID(plan *Plan, ids map[Ref]string, ref Ref) string {
	if id := ids[ref]; id != "" {
		return id
	}
	return plan.Desired.agentName(ref)
}

func (a *Applier) cluster(ctx context.Context, plan *Plan, step Change, ids map[Ref]string) error {
	d := plan.Desired.Clusters[step.Ref.Name]
	profile := specID(plan, ids, Ref{Kind: "profile", Name: d.Profile})
	if step.Action == Replace {
		if err := a.delete(ctx, plan.Set, Change{Action: Delete, Ref: step.Ref, ID: step.ID, Name: step.Ref.Name}); err != nil {
			return err
		}
	}
	if step.Action == Create || step.Action == Replace {
		body := map[string]any{"name": d.Name, "profile_id": profile}
		for k, v := range map[string]*int{"desired_capacity": d.DesiredCapacity, "min_size": d.MinSize, "max_size": d.MaxSize, "timeout": d.Timeout} {
			if v != nil {
				body[k] = *v
			}
		}
		if d.Metadata != nil {
			body["metadata"] = d.Metadata
		}
		if len(d.Config) > 0 {
			body["config"] = d.Config
		}
		a.say("%s: creating", step.Ref)
		var out struct {
			Cluster api.Cluster `json:"cluster"`
		}
		r, err := a.Client.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": body}, &out)
		if err != nil {
			return fmt.Errorf("create %s: %w", step.Ref, err)
		}
		if err := a.own(ctx, plan.Set, step.Ref, d.Name, out.Cluster.ID); err != nil {
			return err
		}
		if err := a.wait(ctx, "create "+step.Ref.String(), r); err != nil {
			return err
		}
		for _, b := range d.Bindings {
			params := map[string]any{"policy_id": specID(plan, ids, Ref{Kind: "policy", Name: b.Policy}), "enabled": b.Enabled}
			if b.Priority != nil {
				params["priority"] = *b.Priority
			}
			if err := a.clusterAction(ctx, d.Name, "policy_attach", params, "attach policy."+b.Policy+" to "+step.Ref.String()); err != nil {
				return err
			}
		}
		return nil
	}
	// Update in place: one PATCH for the cluster's fields, then bindings.
	patch := map[string]any{}
	config := map[string]any{}
	var bindings []FieldChange
	for _, f := range step.Fields {
		switch {
		case f.Path == "profile":
			patch["profile_id"] = profile
		case f.Path == "metadata":
			patch["metadata"] = f.New
		case strings.HasPrefix(f.Path, "config."):
			config[strings.TrimPrefix(f.Path, "config.")] = f.New
		case strings.HasPrefix(f.Path, "binding."):
			bindings = append(bindings, f)
		case f.Path == "depends_on" || f.Path == "dependents":
		default:
			patch[f.Path] = f.New
		}
	}
	if len(config) > 0 {
		patch["config"] = config
	}
	if len(patch) > 0 {
		a.say("%s: updating %s", step.Ref, strings.Join(fieldPaths(step.Fields), ", "))
		r, err := a.Client.Do(ctx, http.MethodPatch, "/v1/clusters/"+url.PathEscape(step.ID), nil, map[string]any{"cluster": patch}, nil)
		if err != nil {
			return fmt.Errorf("update %s: %w", step.Ref, err)
		}
		if err := a.wait(ctx, "update "+step.Ref.String(), r); err != nil {
			return err
		}
	}
	// Detach first: a replaced policy's successor has the same type, and a
	// cluster takes one policy of a type.
	for _, f := range bindings {
		if f.New == nil {
			name := strings.TrimPrefix(f.Path, "binding.")
			if err := a.clusterAction(ctx, step.ID, "policy_detach", map[string]any{"policy_id": name}, "detach "+name+" from "+step.Ref.String()); err != nil {
				return err
			}
		}
	}
	for _, f := range bindings {
		if f.New == nil {
			continue
		}
		name := strings.TrimPrefix(f.Path, "binding.")
		params := map[string]any{"policy_id": name}
		for _, b := range d.Bindings {
			if ref := (Ref{Kind: "policy", Name: b.Policy}); plan.Desired.agentName(ref) == name {
				params["policy_id"] = specID(plan, ids, ref)
			}
		}
		if nv, ok := f.New.(map[string]any); ok {
			for k, v := range nv {
				params[k] = v
			}
		}
		action := "policy_update"
		if f.Old == nil {
			action = "policy_attach"
		}
		if err := a.clusterAction(ctx, step.ID, action, params, strings.ReplaceAll(action, "_", " ")+" "+name+" on "+step.Ref.String()); err != nil {
			return err
		}
	}
	return nil
}

func fieldPaths(fs []FieldChange) []string {
	var out []string
	for _, f := range fs {
		if !strings.HasPrefix(f.Path, "binding.") && f.Path != "depends_on" && f.Path != "dependents" {
			out = append(out, f.Path)
		}
	}
	return out
}

func (a *Applier) delete(ctx context.Context, set string, step Change) error {
	if step.Ref.Kind == "milestone" {
		a.say("%s: destroying", step.Ref)
		if err := a.Client.DeleteMilestone(ctx, step.ID); err != nil && !api.IsNotFound(err) {
			return fmt.Errorf("destroy %s: %w", step.Ref, err)
		}
		return nil
	}
	coll := map[string]string{"profile": "profiles", "policy": "policies", "cluster": "clusters"}[step.Ref.Kind]
	a.say("%s: destroying %s", step.Ref, step.Name)
	r, err := a.Client.Do(ctx, http.MethodDelete, "/v1/"+coll+"/"+url.PathEscape(step.ID), nil, nil, nil)
	if api.IsNotFound(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("destroy %s: %w", step.Ref, err)
	}
	return a.wait(ctx, "destroy "+step.Ref.String(), r)
}
