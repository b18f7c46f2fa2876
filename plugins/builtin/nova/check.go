package nova

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/plugins/builtin/internal/fanout"
	"github.com/grovehq/grove/plugins/sdk"
)

// observed is one node's server as Nova lists it; nil Server is a server
// Nova does not have.
type observed struct {
	id     string
	server *servers.Server
}

// observe reads the servers of a batch: one listing of the servers named
// like the batch's, then a read by id of any recorded server the listing
// missed (renamed behind Grove's back, or gone). When the cloud cannot be
// asked, fail holds the batch's results.
func (d *Driver) observe(ctx context.Context, p sdk.Spec, nodes []sdk.Node) (c *clients, pr Properties, got []observed, fail []sdk.Result) {
	pr, err := propsOf(p)
	if err != nil {
		return nil, pr, nil, fanout.FailAll(ctx, nodes, err)
	}
	if c, err = d.connect(ctx, pr.Context); err != nil {
		return nil, pr, nil, fanout.FailAll(ctx, nodes, err)
	}
	var names []string
	for _, n := range nodes {
		if stateOf(n).ServerID == "" {
			continue
		}
		name, _ := n.Data["server_name"].(string)
		if name == "" {
			name = serverName(pr, n)
		}
		names = append(names, name)
	}
	byID := map[string]servers.Server{}
	if len(names) > 0 {
		all, err := listNamed(ctx, c, names)
		if err != nil {
			return nil, pr, nil, fanout.FailAll(ctx, nodes, apiError(ctx, "list the servers of the batch", err))
		}
		for _, s := range all {
			byID[s.ID] = s
		}
	}
	got = make([]observed, len(nodes))
	for i, n := range nodes {
		id := stateOf(n).ServerID
		got[i].id = id
		if id == "" {
			continue
		}
		if s, ok := byID[id]; ok {
			got[i].server = &s
			continue
		}
		s, err := servers.Get(ctx, c.compute, id).Extract()
		switch {
		case gophercloud.ResponseCodeIs(err, 404):
		case err != nil:
			return nil, pr, nil, fanout.FailAll(ctx, nodes, apiError(ctx, "read server "+id, err))
		default:
			got[i].server = s
		}
	}
	return c, pr, got, nil
}

// transitional are the statuses of a server Nova is working on: it is
// neither healthy nor dead until the work ends.
var transitional = map[string]bool{"BUILD": true, "REBOOT": true, "HARD_REBOOT": true, "REBUILD": true, "RESIZE": true,
	"VERIFY_RESIZE": true, "REVERT_RESIZE": true, "MIGRATING": true, "PASSWORD": true}

// checkIn reports ACTIVE servers healthy and ERROR, SHUTOFF, PAUSED,
// SUSPENDED, SHELVED and missing ones dead with the reason, for the whole
// batch with one listing. A server Nova is working on (rebooting,
// resizing) counts as healthy, with its status as the reason.
func (d *Driver) checkIn(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	_, pr, got, fail := d.observe(ctx, p, nodes)
	if fail != nil {
		return fail
	}
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		r := sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State}
		o := got[i]
		switch {
		case o.id == "":
			r.Reason = "the node has no server recorded"
		case o.server == nil || o.server.Status == "DELETED" || o.server.Status == "SOFT_DELETED":
			r.Reason = fmt.Sprintf("the server %s (%s) is missing", serverName(pr, n), o.id)
		case o.server.Status == "ACTIVE":
			r.Healthy, r.Reason = true, "server ACTIVE"
		case transitional[o.server.Status]:
			r.Healthy, r.Reason = true, fmt.Sprintf("server %s", o.server.Status)
		case o.server.Status == "ERROR" && o.server.Fault.Message != "":
			r.Reason = fmt.Sprintf("the server %s is ERROR: %s", o.server.Name, o.server.Fault.Message)
		default:
			r.Reason = fmt.Sprintf("the server %s is %s", o.server.Name, o.server.Status)
		}
		out[i] = r
	}
	return out
}
