package nova

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/plugins/builtin/internal/fanout"
	"github.com/grovehq/grove/plugins/sdk"
)

// deleteLimit bounds how long a delete waits for one server to go when
// ctx has no deadline of its own.
const deleteLimit = 10 * time.Minute

// deleteIn deletes each node's server and waits until Nova no longer has it,
// within ctx's deadline (the action's timeout). A server already gone is
// success. Servers carrying the node's id that were never recorded (a
// create cut short) go too.
func (d *Driver) deleteIn(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	pr, err := propsOf(p)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	c, err := d.connect(ctx, pr.Context)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	strays, err := owned(ctx, c, pr, nodes)
	if err != nil {
		return fanout.FailAll(ctx, nodes, apiError(ctx, "list the servers of the batch", err))
	}
	neutron := slices.ContainsFunc(pr.Networks, needsNeutron)
	return each(nodes, func(n sdk.Node) sdk.Result {
		r := sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State}
		ids := []string{}
		if id := stateOf(n).ServerID; id != "" {
			ids = append(ids, id)
		}
		if s, ok := strays[n.ID]; ok && !slices.Contains(ids, s.ID) {
			ids = append(ids, s.ID)
		}
		for _, id := range ids {
			if err := deleteAndWait(ctx, c, id, deleteLimit); err != nil {
				r.Err = err
				return r
			}
		}
		if neutron || n.Data["ports"] != nil || n.Data["floating_ips"] != nil {
			// Only once the server is gone: Nova has let go of the ports.
			if err := dropPorts(ctx, c, n.ID, false); err != nil {
				r.Err = err
			}
		}
		return r
	})
}

// waitStatus waits until a server's status is want with no task running,
// and returns it. ERROR (when not wanted) fails with Nova's fault.
func waitStatus(ctx context.Context, c *clients, id, name string, want ...string) (*servers.Server, error) {
	var s *servers.Server
	err := gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
		got, err := servers.Get(ctx, c.compute, id).Extract()
		if err != nil {
			if gophercloud.ResponseCodeIs(err, 404) {
				return false, fmt.Errorf("server %s (%s) is gone", name, id)
			}
			return false, err
		}
		s = got
		if slices.Contains(want, s.Status) && s.TaskState == "" {
			return true, nil
		}
		if s.Status == "ERROR" {
			msg := s.Fault.Message
			if msg == "" {
				msg = "Nova gave no fault"
			}
			return false, fmt.Errorf("server %s (%s) went ERROR: %s", name, id, msg)
		}
		return false, nil
	})
	if err != nil && ctx.Err() != nil {
		status := "not read"
		if s != nil {
			status = s.Status
		}
		return s, sdk.Retryable(fmt.Errorf("server %s (%s) was not %s within the action's timeout (status %s): %w", name, id, strings.Join(want, " or "), status, ctx.Err()))
	}
	return s, err
}

// grownMetadata is the metadata a node's server carries: the profile's
// and Grove's keys.
func grownMetadata(pr Properties, n sdk.Node) map[string]string {
	md := maps.Clone(pr.Metadata)
	if md == nil {
		md = map[string]string{}
	}
	md[keyNode] = n.ID
	if n.ClusterID != "" {
		md[keyCluster] = n.ClusterID
		md[keyIndex] = strconv.Itoa(n.Index)
	}
	return md
}

// NotUpdatable lists the properties that differ between two specs and
// cannot change on an existing server, with why.
func NotUpdatable(old, new sdk.Spec) []string {
	return Schema().NotUpdatable(old.Properties, new.Properties)
}

// updateIn changes each node's server in place, as Senlin does: name,
// metadata and admin password directly, the image by rebuild, the flavor
// by resize then confirm (reverted when the resize fails), networks by
// detaching and attaching interfaces. A change to a
// property that is not updatable is refused, naming it.
func (d *Driver) updateIn(ctx context.Context, old, new sdk.Spec, nodes []sdk.Node) []sdk.Result {
	if bad := NotUpdatable(old, new); len(bad) > 0 {
		return fanout.FailAll(ctx, nodes, fmt.Errorf("properties %s cannot be updated on existing servers; make a new profile and replace the nodes", strings.Join(bad, ", ")))
	}
	oldPr, err := propsOf(old)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	r, err := d.resolve(ctx, new)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	var oldNets []netEntry
	if !sameNetworks(oldPr.Networks, r.pr.Networks) {
		// The old profile's names, resolved as they were (its own cache).
		or, err := d.resolve(ctx, old)
		if err != nil {
			return fanout.FailAll(ctx, nodes, fmt.Errorf("resolve the networks of the profile being replaced: %w", err))
		}
		oldNets = or.entries
	} else {
		oldNets = r.entries
	}
	return each(nodes, func(n sdk.Node) sdk.Result { return d.update(ctx, r, oldPr, oldNets, n) })
}

func sameNetworks(a, b []Network) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

func (d *Driver) update(ctx context.Context, r *resolved, old Properties, oldNets []netEntry, n sdk.Node) sdk.Result {
	c, pr := r.c, r.pr
	id := stateOf(n).ServerID
	name := serverName(pr, n)
	fail := func(err error) sdk.Result {
		return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: err}
	}
	if id == "" {
		return fail(fmt.Errorf("node %s has no server recorded", n.Name))
	}
	s, err := servers.Get(ctx, c.compute, id).Extract()
	if err != nil {
		return fail(apiError(ctx, "read server "+name, err))
	}
	if s.Name != name {
		if _, err := servers.Update(ctx, c.compute, id, servers.UpdateOpts{Name: name}).Extract(); err != nil {
			return fail(apiError(ctx, "rename server "+s.Name+" to "+name, err))
		}
	}
	if md := grownMetadata(pr, n); !maps.Equal(md, s.Metadata) {
		if _, err := servers.ResetMetadata(ctx, c.compute, id, servers.MetadataOpts(md)).Extract(); err != nil {
			return fail(apiError(ctx, "set the metadata of server "+name, err))
		}
	}
	if pr.AdminPass != old.AdminPass && pr.AdminPass != "" {
		if err := servers.ChangeAdminPassword(ctx, c.compute, id, pr.AdminPass).ExtractErr(); err != nil {
			return fail(apiError(ctx, "change the admin password of server "+name, err))
		}
	}
	if cur, _ := s.Image["id"].(string); r.imageID != "" && cur != r.imageID {
		if err := rebuild(ctx, c, id, name, r.imageID); err != nil {
			return fail(err)
		}
	}
	if cur, _ := s.Flavor["original_name"].(string); cur != r.flavorName {
		if err := resize(ctx, c, id, name, r.flavorID, r.flavorName); err != nil {
			return fail(err)
		}
	}
	if err := replug(ctx, r, n.ID, id, name, oldNets); err != nil {
		return fail(err)
	}
	res := describe(ctx, c, n, id, name)
	if res.Err == nil && r.usesNeutron() {
		neutron, err := d.finishNeutron(ctx, r, n, id)
		if err != nil {
			return fail(err)
		}
		maps.Copy(res.Data, neutron)
	}
	return res
}

// describe reads a node's server after a change: healthy when ACTIVE.
func describe(ctx context.Context, c *clients, n sdk.Node, id, name string) sdk.Result {
	s, err := servers.Get(ctx, c.compute, id).Extract()
	if err != nil {
		return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: apiError(ctx, "read server "+name, err)}
	}
	res := result(n, *s)
	res.Healthy = s.Status == "ACTIVE"
	res.Reason = "server " + s.Status
	return res
}

// rebuild rebuilds a server from an image and waits for it to come back
// (ACTIVE, or SHUTOFF for a server that was stopped).
func rebuild(ctx context.Context, c *clients, id, name, image string) error {
	before, err := servers.Get(ctx, c.compute, id).Extract()
	if err != nil {
		return apiError(ctx, "read server "+name, err)
	}
	if _, err := servers.Rebuild(ctx, c.compute, id, servers.RebuildOpts{ImageRef: image}).Extract(); err != nil {
		return apiError(ctx, "rebuild server "+name, err)
	}
	want := []string{"ACTIVE"}
	if before.Status == "SHUTOFF" {
		want = append(want, "SHUTOFF")
	}
	if _, err := waitStatus(ctx, c, id, name, want...); err != nil {
		return fmt.Errorf("rebuild server %s: %w", name, err)
	}
	return nil
}

// resize moves a server to a flavor and confirms it; a resize that fails
// before it can be confirmed is reverted.
func resize(ctx context.Context, c *clients, id, name, flavorID, flavorName string) error {
	if err := servers.Resize(ctx, c.compute, id, servers.ResizeOpts{FlavorRef: flavorID}).ExtractErr(); err != nil {
		return apiError(ctx, fmt.Sprintf("resize server %s to flavor %s", name, flavorName), err)
	}
	s, err := waitStatus(ctx, c, id, name, "VERIFY_RESIZE", "ACTIVE", "SHUTOFF")
	if err != nil {
		if s != nil && s.Status == "VERIFY_RESIZE" {
			_ = servers.RevertResize(context.WithoutCancel(ctx), c.compute, id).ExtractErr()
		}
		return fmt.Errorf("resize server %s to flavor %s: %w", name, flavorName, err)
	}
	if s.Status != "VERIFY_RESIZE" {
		// Nova confirmed it itself (resize_confirm_window), or the resize
		// ended without moving: the flavor tells.
		if got, _ := s.Flavor["original_name"].(string); got != flavorName {
			return fmt.Errorf("resize server %s to flavor %s: the server is %s with flavor %s; Nova's instance actions say why", name, flavorName, s.Status, got)
		}
		return nil
	}
	if err := servers.ConfirmResize(ctx, c.compute, id).ExtractErr(); err != nil {
		_ = servers.RevertResize(context.WithoutCancel(ctx), c.compute, id).ExtractErr()
		return apiError(ctx, fmt.Sprintf("confirm the resize of server %s", name), err)
	}
	if _, err := waitStatus(ctx, c, id, name, "ACTIVE", "SHUTOFF"); err != nil {
		return fmt.Errorf("confirm the resize of server %s: %w", name, err)
	}
	return nil
}

// recreate deletes each node's server and boots a new one from p.
func (d *Driver) recreate(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	gone := d.Delete(ctx, p, nodes)
	return fanout.Replace(nodes, gone, "server_id", func(batch []sdk.Node) []sdk.Result { return d.Create(ctx, p, batch) })
}

// RecoverParams are the parameters of a recovery: REBOOT's type.
type RecoverParams struct {
	Type string `json:"type"`
}

// recoverIn brings nodes back with Senlin's recovery operations: RECREATE
// (the default) deletes the server and boots a new one; REBUILD rebuilds
// it from the profile's image; REBOOT reboots it, HARD unless params say
// type SOFT. A server that is missing is booted again whatever the
// operation. The names of Operate's operations are accepted too.
func (d *Driver) recoverIn(ctx context.Context, p sdk.Spec, nodes []sdk.Node, operation string, params map[string]any) []sdk.Result {
	op := strings.ToUpper(operation)
	if op == "" || op == "RECREATE" {
		return d.recreate(ctx, p, nodes)
	}
	if op != "REBUILD" && op != "REBOOT" {
		if isOperation(strings.ToLower(operation)) {
			return d.Operate(ctx, p, nodes, strings.ToLower(operation), params)
		}
		return fanout.FailAll(ctx, nodes, fmt.Errorf("%s cannot recover with %q; it knows %s", TypeName, operation, strings.Join(Operations, ", ")))
	}
	var in RecoverParams
	if err := sdk.Decode("params", params, &in); err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	kind := servers.HardReboot
	switch strings.ToUpper(in.Type) {
	case "", "HARD":
	case "SOFT":
		kind = servers.SoftReboot
	default:
		return fanout.FailAll(ctx, nodes, fmt.Errorf("params.type: %q is not a reboot type; use SOFT or HARD", in.Type))
	}
	var r *resolved
	if op == "REBUILD" {
		var err error
		if r, err = d.resolve(ctx, p); err != nil {
			return fanout.FailAll(ctx, nodes, err)
		}
	}
	c, pr, got, fail := d.observe(ctx, p, nodes)
	if fail != nil {
		return fail
	}
	out := make([]sdk.Result, len(nodes))
	var missing []int
	var present []int
	for i, o := range got {
		if o.server == nil || o.server.Status == "DELETED" || o.server.Status == "SOFT_DELETED" {
			missing = append(missing, i)
		} else {
			present = append(present, i)
		}
	}
	batch := make([]sdk.Node, len(present))
	for j, i := range present {
		batch[j] = nodes[i]
	}
	done := each(batch, func(n sdk.Node) sdk.Result {
		id, name := stateOf(n).ServerID, serverName(pr, n)
		var err error
		if op == "REBUILD" {
			// Senlin rebuilds from the server's own image; a server booted
			// from a volume has none, and takes the profile's.
			image := r.imageID
			if s, gerr := servers.Get(ctx, c.compute, id).Extract(); gerr == nil {
				if cur, _ := s.Image["id"].(string); cur != "" {
					image = cur
				}
			}
			if image == "" {
				err = fmt.Errorf("server %s has no image to rebuild from (it boots from a volume); recover it with RECREATE", name)
			} else {
				err = rebuild(ctx, c, id, name, image)
			}
		} else {
			if err = servers.Reboot(ctx, c.compute, id, servers.RebootOpts{Type: kind}).ExtractErr(); err == nil {
				_, err = waitStatus(ctx, c, id, name, "ACTIVE")
			} else {
				err = apiError(ctx, "reboot server "+name, err)
			}
		}
		if err != nil {
			return sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: err}
		}
		return describe(ctx, c, n, id, name)
	})
	for j, i := range present {
		out[i] = done[j]
	}
	if len(missing) > 0 {
		batch := make([]sdk.Node, len(missing))
		for j, i := range missing {
			batch[j] = nodes[i]
		}
		made := d.recreate(ctx, p, batch)
		for j, i := range missing {
			out[i] = made[j]
		}
	}
	return out
}
