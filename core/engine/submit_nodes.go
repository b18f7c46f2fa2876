package engine

import (
	"context"
	"reflect"
	"slices"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// NodeCreate is a node create request.
type NodeCreate struct {
	Name     string
	Profile  string
	Cluster  string
	Role     string
	Metadata map[string]any
}

// CreateNode queues the creation of a node, in a cluster or orphan.
func (e *Engine) CreateNode(ctx context.Context, c Caller, req NodeCreate) (*model.Node, *model.Action, error) {
	if err := model.ValidateName("name", req.Name); err != nil {
		return nil, nil, BadRequest("%s", err)
	}
	if err := model.ValidateNodeRole("role", req.Role); err != nil {
		return nil, nil, BadRequest("%s", err)
	}
	prof, err := e.store.FindProfile(ctx, c.Project, req.Profile)
	if err != nil {
		return nil, nil, bodyRef("profile_id", err)
	}
	if err := e.checkProfileAccess(ctx, c.Project, prof); err != nil {
		return nil, nil, err
	}
	n := &model.Node{ID: e.rowID(), Name: req.Name, ProfileID: prof.ID, User: c.User, Project: c.Project, Index: -1, Role: req.Role,
		InitAt: e.cfg.Now(), Status: model.NodeInit, StatusReason: "Initializing", Data: map[string]any{}, Metadata: orEmpty(req.Metadata), Dependents: map[string]any{}}
	var cl *model.Cluster
	if req.Cluster != "" {
		cl, err = e.store.FindCluster(ctx, c.Project, req.Cluster)
		if err != nil {
			return nil, nil, bodyRef("cluster_id", err)
		}
		cp, err := e.store.GetProfile(ctx, cl.ProfileID)
		if err != nil {
			return nil, nil, err
		}
		if cp.Type != prof.Type {
			return nil, nil, BadRequest("profile_id: the node's profile type %s differs from the cluster's %s.", prof.Type, cp.Type)
		}
		count, err := e.store.CountNodes(ctx, cl.ID)
		if err != nil {
			return nil, nil, err
		}
		desired := count + 1
		b := scaling.Bounds{Desired: cl.DesiredCapacity, Min: cl.MinSize, Max: cl.MaxSize}
		if msg := scaling.CheckSizeParams(&b, &desired, nil, nil, true, e.cfg.MaxNodesPerCluster); msg != "" {
			return nil, nil, BadRequest("%s", msg)
		}
		n.ClusterID = cl.ID
	}
	if err := e.preparePorts(ctx, prof, []*model.Node{n}); err != nil {
		return nil, nil, err
	}
	a, err := e.newAction(c, model.NodeCreateAction, n.ID, n.ClusterID, model.NodeCreateInputs{}, 0)
	if err != nil {
		return nil, nil, err
	}
	err = e.submit(ctx, a, true, prof.ID, func(tx store.Store) error {
		if cl != nil {
			cur, err := tx.GetCluster(ctx, cl.ID)
			if err != nil {
				return err
			}
			n.Index = cur.NextIndex
			n.Name = e.randName(configString(cur.Config, "node.name.format"), n.Index)
			cur.NextIndex++
			if err := tx.UpdateCluster(ctx, cur); err != nil {
				return err
			}
		}
		if hostLocal(prof.Type) {
			// A node asked of this agent runs here if this host takes
			// nodes; otherwise where placement puts it.
			if h, err := tx.GetHost(ctx, e.cfg.HostName); err == nil && h.Schedulable() && placementHost(n) == "" {
				n.Host = h.Name
				n.Data["host"] = h.Name
			} else if err := e.placeOnHosts(ctx, tx, []*model.Node{n}); err != nil {
				return err
			}
		}
		return tx.CreateNodes(ctx, []*model.Node{n})
	})
	if err != nil {
		return nil, nil, err
	}
	return n, a, nil
}

// NodeUpdate is a node update request; nil fields are unchanged.
type NodeUpdate struct {
	Name     *string
	Profile  *string
	Role     *string
	Metadata map[string]any
	Tainted  *bool
}

// UpdateNode queues a node update.
func (e *Engine) UpdateNode(ctx context.Context, c Caller, ident string, req NodeUpdate) (*model.Node, *model.Action, error) {
	n, err := e.store.FindNode(ctx, c.Project, ident)
	if err != nil {
		return nil, nil, err
	}
	var in model.NodeUpdateInputs
	if req.Name != nil && *req.Name != n.Name {
		if err := model.ValidateName("name", *req.Name); err != nil {
			return nil, nil, BadRequest("%s", err)
		}
		in.Name = req.Name
	}
	if req.Role != nil && *req.Role != n.Role {
		if err := model.ValidateNodeRole("role", *req.Role); err != nil {
			return nil, nil, BadRequest("%s", err)
		}
		in.Role = req.Role
	}
	in.Metadata = req.Metadata
	if req.Tainted != nil && *req.Tainted != n.Tainted {
		in.Tainted = req.Tainted
	}
	if req.Profile != nil {
		np, err := e.store.FindProfile(ctx, c.Project, *req.Profile)
		if err != nil {
			return nil, nil, bodyRef("profile_id", err)
		}
		if np.ID != n.ProfileID {
			old, err := e.store.GetProfile(ctx, n.ProfileID)
			if err != nil {
				return nil, nil, err
			}
			if old.Type != np.Type {
				return nil, nil, BadRequest("profile_id: the new profile has type %s but the node is %s.", np.Type, old.Type)
			}
			if err := e.checkProfileAccess(ctx, c.Project, np); err != nil {
				return nil, nil, err
			}
			in.NewProfileID = np.ID
		}
	}
	if reflect.ValueOf(in).IsZero() {
		return nil, nil, BadRequest("No property needs an update.")
	}
	a, err := e.newAction(c, model.NodeUpdateAction, n.ID, n.ClusterID, in, 0)
	if err != nil {
		return nil, nil, err
	}
	return n, a, e.submit(ctx, a, false, n.ProfileID, lockNewProfile(ctx, in.NewProfileID))
}

// DeleteNode queues a node's deletion.
func (e *Engine) DeleteNode(ctx context.Context, c Caller, ident string, force bool) (*model.Action, error) {
	n, err := e.store.FindNode(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	if !force && slices.Contains([]string{model.NodeCreating, model.NodeUpdating, model.NodeDeleting, model.NodeRecovering}, n.Status) {
		return nil, Conflict("ActionInProgress", "The node '%s' is in status %s; wait for it to finish or delete with force.", n.Name, n.Status)
	}
	if deps, _ := n.Dependents["nodes"].([]any); len(deps) > 0 {
		return nil, Conflict("ResourceInUse", "The node '%s' has dependent nodes and cannot be deleted.", n.Name)
	}
	a, err := e.newAction(c, model.NodeDeleteAction, n.ID, n.ClusterID, model.NodeDeleteInputs{}, 0)
	if err != nil {
		return nil, err
	}
	return a, e.submit(ctx, a, true, n.ProfileID, nil)
}

// NodeAction queues check or recover on a node.
func (e *Engine) NodeAction(ctx context.Context, c Caller, ident string, body map[string]any) (*model.Action, error) {
	if len(body) != 1 {
		return nil, BadRequest("Send exactly one node action: check or recover.")
	}
	n, err := e.store.FindNode(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	var action string
	var inputs any
	for k, v := range body {
		params, _ := v.(map[string]any)
		if v != nil && params == nil {
			return nil, BadRequest("%s: the action's parameters must be an object.", k)
		}
		switch k {
		case "check":
			action, inputs = model.NodeCheckAction, model.CheckInputs(params)
		case "recover":
			action = model.NodeRecoverAction
			inputs, err = recoverInputs(params, []string{"operation", "operation_params", "check", "delete_timeout", "force_recreate"})
			if err != nil {
				return nil, err
			}
		default:
			return nil, BadRequest("Unrecognized action '%s' specified; node actions are check and recover.", k)
		}
	}
	a, err := e.newAction(c, action, n.ID, n.ClusterID, inputs, 0)
	if err != nil {
		return nil, err
	}
	return a, e.submit(ctx, a, false, n.ProfileID, nil)
}
