package nova

import (
	"context"
	"fmt"
	"strings"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/plugins/builtin/internal/fanout"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// NodeOperations are Senlin's server operations Operate runs, as the API
// lists them (GET /v1/profile-types/os.nova.server-1.0/ops) and checks
// their parameters.
func NodeOperations() []sdk.NodeOperation {
	none := schema.Schema{}
	return []sdk.NodeOperation{
		{Name: "reboot", Description: "Reboot the server.", Parameters: schema.Schema{
			"type": {Type: schema.String, Default: "SOFT", Description: "SOFT (through the guest) or HARD (a power cycle).",
				Constraints: []schema.Constraint{schema.AllowedValues("SOFT", "HARD")}}}},
		{Name: "rebuild", Description: "Rebuild the server from its image.", Parameters: none},
		{Name: "start", Description: "Start a stopped server.", Parameters: none},
		{Name: "stop", Description: "Stop (shut off) the server; the node stays, WARNING, until started.", Parameters: none},
		{Name: "pause", Description: "Pause the server in memory; the node is WARNING until unpaused.", Parameters: none},
		{Name: "unpause", Description: "Unpause a paused server.", Parameters: none},
		{Name: "suspend", Description: "Suspend the server to disk; the node is WARNING until resumed.", Parameters: none},
		{Name: "resume", Description: "Resume a suspended server.", Parameters: none},
		{Name: "lock", Description: "Lock the server, so that only an administrator can act on it.", Parameters: none},
		{Name: "unlock", Description: "Unlock a locked server.", Parameters: none},
		{Name: "change_password", Description: "Set the server's administrator password.", Parameters: schema.Schema{
			"admin_pass": {Type: schema.String, Required: true, Sensitive: true, Description: "The new password."}}},
		{Name: "rescue", Description: "Boot the server from a rescue image; the node is WARNING until unrescued.", Parameters: schema.Schema{
			"image_ref": {Type: schema.String, Description: "The rescue image, by name or id (default: the server's own image)."}}},
		{Name: "unrescue", Description: "Boot a rescued server from its own disk again.", Parameters: none},
	}
}

// isOperation reports whether op is one of NodeOperations.
func isOperation(op string) bool {
	_, ok := sdk.FindNodeOperation(NodeOperations(), op)
	return ok
}

// OperationParams are the parameters of the operations: reboot's type,
// change_password's admin_pass, rescue's image_ref.
type OperationParams struct {
	Type      string `json:"type"`
	AdminPass string `json:"admin_pass"`
	ImageRef  string `json:"image_ref"`
}

// after is the status each operation leaves a server in; lock and unlock
// change none.
var after = map[string][]string{
	"reboot": {"ACTIVE"}, "rebuild": {"ACTIVE", "SHUTOFF"}, "start": {"ACTIVE"}, "stop": {"SHUTOFF"},
	"pause": {"PAUSED"}, "unpause": {"ACTIVE"}, "suspend": {"SUSPENDED"}, "resume": {"ACTIVE"},
	"rescue": {"RESCUE"}, "unrescue": {"ACTIVE"},
}

// operateIn runs a node operation on each node's server and waits until
// Nova has carried it out: reboot (params type SOFT or HARD), rebuild,
// start, stop, pause, unpause, suspend, resume, lock, unlock,
// change_password (admin_pass), rescue (image_ref), unrescue. It is the
// driver's sdk.Operator hook (POST /v1/nodes/{id}/ops); a node is healthy
// afterwards when its server is ACTIVE.
func (d *Driver) operateIn(ctx context.Context, p sdk.Spec, nodes []sdk.Node, op string, params map[string]any) []sdk.Result {
	if !isOperation(op) {
		return fanout.FailAll(ctx, nodes, fmt.Errorf("%s has no operation %q; it has %s", TypeName, op, sdk.NodeOperationNames(NodeOperations())))
	}
	var in OperationParams
	if err := sdk.Decode("params", params, &in); err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	kind := servers.SoftReboot
	switch strings.ToUpper(in.Type) {
	case "", "SOFT":
	case "HARD":
		kind = servers.HardReboot
	default:
		return fanout.FailAll(ctx, nodes, fmt.Errorf("params.type: %q is not a reboot type; use SOFT or HARD", in.Type))
	}
	if op == "change_password" && in.AdminPass == "" {
		return fanout.FailAll(ctx, nodes, fmt.Errorf("params.admin_pass: change_password needs the new password"))
	}
	pr, err := propsOf(p)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	c, err := d.connect(ctx, pr.Context)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	rescueImage := ""
	if op == "rescue" && in.ImageRef != "" {
		id, diag := findImage(ctx, c, "params.image_ref", in.ImageRef)
		if diag != nil {
			return fanout.FailAll(ctx, nodes, diag)
		}
		rescueImage = id
	}
	return each(nodes, func(n sdk.Node) sdk.Result {
		id, name := stateOf(n).ServerID, serverName(pr, n)
		if id == "" {
			return sdk.Result{ID: n.ID, Err: fmt.Errorf("node %s has no server recorded", n.Name)}
		}
		cc := c.compute
		var err error
		switch op {
		case "reboot":
			err = servers.Reboot(ctx, cc, id, servers.RebootOpts{Type: kind}).ExtractErr()
		case "rebuild":
			var s *servers.Server
			if s, err = servers.Get(ctx, cc, id).Extract(); err == nil {
				image, _ := s.Image["id"].(string)
				if image == "" {
					return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State,
						Err: fmt.Errorf("server %s has no image to rebuild from (it boots from a volume)", name)}
				}
				if err := rebuild(ctx, c, id, name, image); err != nil {
					return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: err}
				}
				return describe(ctx, c, n, id, name)
			}
		case "start":
			err = servers.Start(ctx, cc, id).ExtractErr()
		case "stop":
			err = servers.Stop(ctx, cc, id).ExtractErr()
		case "pause":
			err = servers.Pause(ctx, cc, id).ExtractErr()
		case "unpause":
			err = servers.Unpause(ctx, cc, id).ExtractErr()
		case "suspend":
			err = servers.Suspend(ctx, cc, id).ExtractErr()
		case "resume":
			err = servers.Resume(ctx, cc, id).ExtractErr()
		case "lock":
			err = servers.Lock(ctx, cc, id).ExtractErr()
		case "unlock":
			err = servers.Unlock(ctx, cc, id).ExtractErr()
		case "change_password":
			err = servers.ChangeAdminPassword(ctx, cc, id, in.AdminPass).ExtractErr()
		case "rescue":
			_, err = servers.Rescue(ctx, cc, id, servers.RescueOpts{RescueImageRef: rescueImage}).Extract()
		case "unrescue":
			err = servers.Unrescue(ctx, cc, id).ExtractErr()
		}
		if err != nil {
			return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: apiError(ctx, op+" server "+name, err)}
		}
		if want := after[op]; want != nil {
			if _, err := waitStatus(ctx, c, id, name, want...); err != nil {
				return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: fmt.Errorf("%s server %s: %w", op, name, err)}
			}
		}
		return describe(ctx, c, n, id, name)
	})
}
