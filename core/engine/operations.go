package engine

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sort"
	"strings"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// Node and cluster operations (Senlin's /ops): the operations a profile
// type declares (sdk.ProfileType.NodeOperations) run on one node
// (NODE_OPERATION) or on the nodes of a cluster that match filters
// (CLUSTER_OPERATION, which forks one NODE_OPERATION per node).

// ProfileOperations returns the node operations of a profile type, as
// GET /v1/profile-types/{type}/ops lists them.
func (e *Engine) ProfileOperations(typ string) ([]sdk.NodeOperation, error) {
	c, ok := e.plugins.Component("profile", typ)
	if !ok {
		return nil, &Error{Status: http.StatusNotFound, Type: "ResourceNotFound", Message: fmt.Sprintf("The profile_type '%s' could not be found.", typ)}
	}
	return c.NodeOperations, nil
}

// operationInputs checks a node operation and its parameters against the
// profile type of profileID: an unknown operation or a bad parameter is a
// 400 naming it; a plugin that speaks a profile API without operations is
// refused with a message that says so.
func (e *Engine) operationInputs(ctx context.Context, profileID, name string, params map[string]any) (model.OperationInputs, error) {
	prof, err := e.store.GetProfile(ctx, profileID)
	if err != nil {
		return model.OperationInputs{}, err
	}
	c, ok := e.plugins.Component("profile", prof.Type)
	if !ok {
		return model.OperationInputs{}, BadRequest("The profile type %s is not served by any plugin.", prof.Type)
	}
	op, ok := sdk.FindNodeOperation(c.NodeOperations, name)
	if !ok {
		names := make([]string, len(c.NodeOperations))
		for i, o := range c.NodeOperations {
			names[i] = o.Name
		}
		known := "it has none"
		if len(names) > 0 {
			known = "it has " + strings.Join(names, ", ")
		}
		return model.OperationInputs{}, BadRequest("The requested operation '%s' is not supported by the profile type '%s'; %s.", name, prof.Type, known)
	}
	if c.APIVersion != "" && apiBefore(c.APIVersion, sdk.ProfileAPIOperate) {
		return model.OperationInputs{}, Conflict("FeatureNotSupported", "The plugin %s serving %s speaks profile API %s, which has no node operations (API %s); update the plugin.",
			c.Plugin, prof.Type, c.APIVersion, sdk.ProfileAPIOperate)
	}
	if params == nil {
		params = map[string]any{}
	}
	if _, diags := op.Parameters.Validate("params", params); len(diags) > 0 {
		return model.OperationInputs{}, BadRequest("Operation '%s': %s", name, diags.Error())
	}
	return model.OperationInputs{Operation: name, Params: params}, nil
}

// apiBefore reports whether API version v is older than min; versions are
// decimal integers.
func apiBefore(v, min string) bool {
	if len(v) != len(min) {
		return len(v) < len(min)
	}
	return v < min
}

// NodeOperation queues an operation on a node.
func (e *Engine) NodeOperation(ctx context.Context, c Caller, ident string, body map[string]any) (*model.Action, error) {
	name, params, err := oneOperation(body)
	if err != nil {
		return nil, err
	}
	n, err := e.store.FindNode(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	in, err := e.operationInputs(ctx, n.ProfileID, name, params)
	if err != nil {
		return nil, err
	}
	a, err := e.newAction(c, model.NodeOperationAction, n.ID, n.ClusterID, in, 0)
	if err != nil {
		return nil, err
	}
	return a, e.submit(ctx, a, false, n.ProfileID, nil)
}

// operationFilters are the node fields a cluster operation may filter on,
// as in Senlin.
var operationFilters = []string{"name", "profile_id", "status", "role"}

// ClusterOperation queues an operation on the nodes of a cluster that match
// the request's filters (all of them without filters).
func (e *Engine) ClusterOperation(ctx context.Context, c Caller, ident string, body map[string]any) (*model.Action, error) {
	name, req, err := oneOperation(body)
	if err != nil {
		return nil, err
	}
	for k := range req {
		if k != "filters" && k != "params" {
			return nil, BadRequest("%s: unrecognized key '%s'; a cluster operation takes filters and params.", name, k)
		}
	}
	filters, ok := req["filters"].(map[string]any)
	if req["filters"] != nil && !ok {
		return nil, BadRequest("%s.filters must be an object.", name)
	}
	params, ok := req["params"].(map[string]any)
	if req["params"] != nil && !ok {
		return nil, BadRequest("%s.params must be an object.", name)
	}
	for k := range filters {
		if !slices.Contains(operationFilters, k) {
			return nil, BadRequest("%s.filters: unrecognized filter '%s'; filters are %s.", name, k, strings.Join(operationFilters, ", "))
		}
	}
	cl, err := e.store.FindCluster(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	in, err := e.operationInputs(ctx, cl.ProfileID, name, params)
	if err != nil {
		return nil, err
	}
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return nil, err
	}
	var ids []string
	for _, n := range nodes {
		if matches(n, filters) {
			ids = append(ids, n.ID)
		}
	}
	if len(ids) == 0 {
		return nil, BadRequest("No node (from cluster '%s') matches the given criteria.", cl.Name)
	}
	sort.Strings(ids)
	a, err := e.newAction(c, model.ClusterOperationAction, cl.ID, cl.ID,
		model.ClusterOperationInputs{Operation: in.Operation, Params: in.Params, Nodes: ids}, cl.Timeout)
	if err != nil {
		return nil, err
	}
	return a, e.submit(ctx, a, false, cl.ProfileID, nil)
}

// oneOperation reads a body of one key, the operation's name, whose value
// is an object (or null).
func oneOperation(body map[string]any) (string, map[string]any, error) {
	if len(body) != 1 {
		return "", nil, BadRequest("Send exactly one operation, as {\"NAME\": {...}}.")
	}
	for k, v := range body {
		if v == nil {
			return k, nil, nil
		}
		m, ok := v.(map[string]any)
		if !ok {
			return "", nil, BadRequest("%s: the operation's parameters must be an object.", k)
		}
		return k, m, nil
	}
	return "", nil, nil
}

// matches reports whether a node matches every filter; a filter's value is
// one value or a list of them (any matches).
func matches(n *model.Node, filters map[string]any) bool {
	for k, want := range filters {
		var got string
		switch k {
		case "name":
			got = n.Name
		case "profile_id":
			got = n.ProfileID
		case "status":
			got = n.Status
		case "role":
			got = n.Role
		}
		vals, isList := want.([]any)
		if !isList {
			vals = []any{want}
		}
		if !slices.ContainsFunc(vals, func(v any) bool { return fmt.Sprint(v) == got }) {
			return false
		}
	}
	return true
}

func (e *Engine) doClusterOperation(ctx context.Context, a *model.Action) error {
	in, err := inputsOf[model.ClusterOperationInputs](a)
	if err != nil {
		return err
	}
	cl, err := e.begin(ctx, a)
	if err != nil {
		return err
	}
	// Nodes that left the cluster since the request are skipped.
	nodes, err := e.store.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	var ids []string
	for _, n := range nodes {
		if slices.Contains(in.Nodes, n.ID) {
			ids = append(ids, n.ID)
		}
	}
	err = e.runStage(ctx, a, "operate", func(tx store.Store) error {
		if err := e.setClusterStatus(ctx, tx, cl.ID, model.ClusterOperating, fmt.Sprintf("Operation %s in progress", in.Operation), nil); err != nil {
			return err
		}
		return e.forkEach(ctx, tx, a, model.NodeOperationAction, ids, model.OperationInputs{Operation: in.Operation, Params: in.Params})
	})
	if err != nil {
		return err
	}
	werr := e.waitChildren(ctx, a)
	if err := e.settle(ctx, cl.ID, a.Action, nil, werr); err != nil {
		return err
	}
	if werr != nil {
		return fmt.Errorf("Failed in operating the cluster: %w", werr)
	}
	return e.end(ctx, a, cl.ID, fmt.Sprintf("Cluster operation '%s' completed.", in.Operation))
}

// operateNodes runs an operation on nodes of one profile. A node the
// driver reports running afterwards is ACTIVE; one it reports stopped is
// WARNING, which the restart supervisor leaves alone.
func (e *Engine) operateNodes(ctx context.Context, nodes []*model.Node, in model.OperationInputs) map[string]error {
	spec, err := e.specFor(ctx, nodes[0].ProfileID)
	if err != nil {
		return failAll(nodes, err)
	}
	if c, ok := e.plugins.Component("profile", spec.Type); ok && c.APIVersion != "" && apiBefore(c.APIVersion, sdk.ProfileAPIOperate) {
		return failAll(nodes, fmt.Errorf("The plugin %s serving %s speaks profile API %s, which has no node operations.", c.Plugin, spec.Type, c.APIVersion))
	}
	if err := e.setStatus(ctx, nodes, model.NodeOperating, fmt.Sprintf("Operation %s in progress", in.Operation)); err != nil {
		return failAll(nodes, err)
	}
	res, err := e.callDriver(ctx, spec.Type, "operate", func(c *sdk.Client) ([]sdk.Result, error) {
		return c.Operate(ctx, spec, e.sdkNodes(ctx, nodes), in.Operation, in.Params)
	})
	out := map[string]error{}
	byID := resultsByID(res)
	now := e.cfg.Now()
	for _, n := range nodes {
		r, ok := byID[n.ID]
		if err := outcome("operating", n, r, ok, err); err != nil {
			out[n.ID] = err
		}
		if ok {
			applyResult(n, r)
		}
		n.UpdatedAt = &now
		switch {
		case out[n.ID] != nil:
			n.Status, n.StatusReason = model.NodeError, out[n.ID].Error()
		case r.Healthy:
			n.Status, n.StatusReason = model.NodeActive, fmt.Sprintf("Operation '%s' succeeded", in.Operation)
		default:
			reason := r.Reason
			if reason == "" {
				reason = "the node is not running"
			}
			n.Status, n.StatusReason = model.NodeWarning, fmt.Sprintf("Operation '%s' succeeded: %s", in.Operation, reason)
		}
	}
	if uerr := e.recordNodes(ctx, nodes); uerr != nil {
		return failAll(nodes, uerr)
	}
	return out
}
