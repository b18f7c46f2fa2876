package engine

import (
	"context"
	"maps"
	"reflect"
	"slices"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

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
	if isGlobal(&model.Cluster{Config: req.Config}) && (deref(req.DesiredCapacity, 0) > 0 || deref(req.MinSize, 0) > 0) {
		return nil, nil, BadRequest("desired_capacity and min_size must be left out (or 0) for a global cluster (grove.failover topology global): it runs one node per eligible host and its desired_capacity follows them.")
	}
	profile, err := e.store.FindProfile(ctx, c.Project, req.Profile)
	if err != nil {
		return nil, nil, bodyRef("profile_id", err)
	}
	if err := e.monitorHostsRefusal(ctx, req.Config, profile); err != nil {
		return nil, nil, err
	}
	if monitored(&model.Cluster{Config: req.Config}) && (deref(req.DesiredCapacity, 0) > 0 || deref(req.MinSize, 0) > 0) {
		t := topologyOf(&model.Cluster{Config: req.Config})
		return nil, nil, BadRequest("desired_capacity and min_size must be left out (or 0) for a %s cluster of %s (grove.failover topology %s): its instance monitors start its nodes, one per host at most, and its desired_capacity follows them.", t, profile.Type, t)
	}
	// Checked again here: a grant taken back stops new clusters of the type.
	if err := e.checkProfileAccess(ctx, c.Project, profile); err != nil {
		return nil, nil, err
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
		if monitored(&model.Cluster{Config: merged}) && !monitored(cl) {
			prof, err := e.store.GetProfile(ctx, cl.ProfileID)
			if err != nil {
				return nil, nil, err
			}
			if err := e.monitorHostsRefusal(ctx, merged, prof); err != nil {
				return nil, nil, err
			}
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
			if err := e.checkProfileAccess(ctx, c.Project, np); err != nil {
				return nil, nil, err
			}
			in.NewProfileID, in.ProfileOnly = np.ID, &req.ProfileOnly
		}
	}
	if (req.DesiredCapacity != nil || req.MinSize != nil) && isGlobal(cl) {
		return nil, nil, globalRefusal(cl, "a change of desired_capacity or min_size")
	}
	if req.DesiredCapacity != nil || req.MinSize != nil {
		if runs, err := e.monitorRuns(ctx, cl); err != nil {
			return nil, nil, err
		} else if runs {
			return nil, nil, monitorRefusal(cl, "a change of desired_capacity or min_size")
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
	if err := e.submit(ctx, a, false, cl.ProfileID, lockNewProfile(ctx, in.NewProfileID)); err != nil {
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
