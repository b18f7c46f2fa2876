package nova

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"regexp"
	"sort"
	"strconv"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/keypairs"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/plugins/builtin/internal/fanout"
	"github.com/grovehq/grove/plugins/sdk"
)

// state is what the engine stores for each node: the server's id.
type state struct {
	ServerID string `json:"server_id"`
}

func stateOf(n sdk.Node) state {
	var st state
	_ = json.Unmarshal(n.State, &st)
	if st.ServerID == "" {
		st.ServerID, _ = n.Data["server_id"].(string)
	}
	if st.ServerID == "" {
		st.ServerID = n.PhysicalID
	}
	return st
}

// serverName is the server's name: the profile's name, else the node's.
func serverName(pr Properties, n sdk.Node) string {
	if pr.Name != "" {
		return pr.Name
	}
	if n.Name != "" {
		return n.Name
	}
	return "grove-" + n.ID
}

// each runs f for every node, at most bootConcurrency at once.
func each(nodes []sdk.Node, f func(sdk.Node) sdk.Result) []sdk.Result {
	return fanout.Each(nodes, bootConcurrency, f)
}

// commonPrefix is the longest prefix all names share.
func commonPrefix(names []string) string {
	if len(names) == 0 {
		return ""
	}
	p := names[0]
	for _, s := range names[1:] {
		for len(p) > 0 && (len(s) < len(p) || s[:len(p)] != p) {
			p = p[:len(p)-1]
		}
	}
	return p
}

// listNamed lists, in one paginated call, the project's servers whose
// names start with what the given names share (Nova's name filter is a
// regular expression).
func listNamed(ctx context.Context, c *clients, names []string) ([]servers.Server, error) {
	opts := servers.ListOpts{}
	if p := commonPrefix(names); p != "" {
		opts.Name = "^" + regexp.QuoteMeta(p)
	}
	pages, err := servers.List(c.compute, opts).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	return servers.ExtractServers(pages)
}

// owned finds the servers the nodes already have, by the node id in their
// metadata: what an earlier, interrupted create booted.
func owned(ctx context.Context, c *clients, pr Properties, nodes []sdk.Node) (map[string]servers.Server, error) {
	names := make([]string, len(nodes))
	want := map[string]bool{}
	for i, n := range nodes {
		names[i] = serverName(pr, n)
		want[n.ID] = true
	}
	all, err := listNamed(ctx, c, names)
	if err != nil {
		return nil, err
	}
	out := map[string]servers.Server{}
	for _, s := range all {
		if id := s.Metadata[keyNode]; want[id] && s.Status != "DELETED" && s.Status != "SOFT_DELETED" {
			out[id] = s
		}
	}
	return out, nil
}

// createIn boots one server per node, at most bootConcurrency at once, and
// waits for each to be ACTIVE within ctx's deadline (the action's
// timeout). A server that goes ERROR fails its node with Nova's fault and
// is deleted.
func (d *Driver) createIn(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	r, err := d.resolve(ctx, p)
	if err != nil {
		return fanout.FailAll(ctx, nodes, err)
	}
	have, err := owned(ctx, r.c, r.pr, nodes)
	if err != nil {
		return fanout.FailAll(ctx, nodes, apiError(ctx, "list the servers of the batch", err))
	}
	return each(nodes, func(n sdk.Node) sdk.Result {
		if s, ok := have[n.ID]; ok {
			return d.await(ctx, r, n, s.ID)
		}
		return d.boot(ctx, r, n)
	})
}

// placement is the node's data.placement, as placement policies give it
// (Senlin's zone and region placement, affinity's server group,
// grove.policy.placement's hypervisor).
type placement struct {
	Zone        string `json:"zone"`
	ServerGroup string `json:"servergroup"`
	Host        string `json:"host"`
}

func placementOf(n sdk.Node) (placement, error) {
	var pl placement
	if raw, ok := n.Data["placement"]; ok && raw != nil {
		if err := sdk.Decode("data.placement", raw, &pl); err != nil {
			return pl, err
		}
	}
	return pl, nil
}

// createOpts builds one node's boot request.
func createOpts(r *resolved, n sdk.Node, nets []servers.Network) (servers.CreateOptsBuilder, servers.SchedulerHintOptsBuilder, error) {
	pr := r.pr
	pl, err := placementOf(n)
	if err != nil {
		return nil, nil, err
	}
	md := map[string]string{}
	for k, v := range pr.Metadata {
		md[k] = v
	}
	md[keyNode] = n.ID
	if n.ClusterID != "" {
		md[keyCluster] = n.ClusterID
		md[keyIndex] = strconv.Itoa(n.Index)
	}
	opts := servers.CreateOpts{
		Name:             serverName(pr, n),
		ImageRef:         r.imageID,
		FlavorRef:        r.flavorID,
		SecurityGroups:   pr.SecurityGroups,
		AvailabilityZone: pr.AvailabilityZone,
		Metadata:         md,
		ConfigDrive:      pr.ConfigDrive,
		AdminPass:        pr.AdminPass,
		DiskConfig:       servers.Manual,
	}
	if pr.AutoDiskConfig {
		opts.DiskConfig = servers.Auto
	}
	if pl.Zone != "" {
		opts.AvailabilityZone = pl.Zone
	}
	if pl.Host != "" {
		// Nova's "ZONE::NODE" form boots on the named hypervisor (an
		// administrator's request), skipping the scheduler's choice.
		opts.AvailabilityZone += "::" + pl.Host
	}
	if pr.UserData != "" {
		// Encoded here, as Senlin does: gophercloud would send text that
		// happens to be valid base64 ("abcd") as is.
		opts.UserData = []byte(base64.StdEncoding.EncodeToString([]byte(pr.UserData)))
	}
	// No networks boots with none, as Senlin did on Nova before 2.37.
	opts.Networks = "none"
	if len(nets) > 0 {
		opts.Networks = nets
	}
	for _, f := range pr.Personality {
		opts.Personality = append(opts.Personality, &servers.File{Path: f.Path, Contents: []byte(f.Contents)})
	}
	for _, b := range pr.BlockDevices {
		bd := servers.BlockDevice{UUID: b.UUID, SourceType: servers.SourceType(b.SourceType), DestinationType: servers.DestinationType(b.DestinationType),
			DiskBus: b.DiskBus, VolumeSize: b.VolumeSize, GuestFormat: b.GuestFormat, DeviceType: b.DeviceType,
			DeleteOnTermination: b.DeleteOnTermination, VolumeType: b.VolumeType, BootIndex: -1}
		if b.BootIndex != nil {
			bd.BootIndex = *b.BootIndex
		}
		opts.BlockDevice = append(opts.BlockDevice, bd)
	}
	var build servers.CreateOptsBuilder = opts
	if pr.KeyName != "" {
		build = keypairs.CreateOptsExt{CreateOptsBuilder: opts, KeyName: pr.KeyName}
	}
	hints := servers.SchedulerHintOpts{}
	if len(pr.SchedulerHints) > 0 {
		hints.AdditionalProperties = map[string]any{}
		for k, v := range pr.SchedulerHints {
			hints.AdditionalProperties[k] = v
		}
	}
	if pl.ServerGroup != "" {
		if hints.AdditionalProperties != nil {
			delete(hints.AdditionalProperties, "group")
		}
		hints.Group = pl.ServerGroup
	}
	return build, hints, nil
}

// boot creates one node's server and waits for it.
func (d *Driver) boot(ctx context.Context, r *resolved, n sdk.Node) sdk.Result {
	if err := ctx.Err(); err != nil {
		return sdk.Result{ID: n.ID, Err: sdk.Retryable(err)}
	}
	nets, made, err := makePorts(ctx, r.c, n.ID, r.entries, r.specs)
	if err != nil {
		return sdk.Result{ID: n.ID, Err: err}
	}
	opts, hints, err := createOpts(r, n, nets)
	if err != nil {
		_ = deletePorts(context.WithoutCancel(ctx), r.c, made)
		return sdk.Result{ID: n.ID, Err: err}
	}
	name := serverName(r.pr, n)
	s, err := servers.Create(ctx, r.c.compute, opts, hints).Extract()
	if err != nil {
		if derr := deletePorts(context.WithoutCancel(ctx), r.c, made); derr != nil {
			err = fmt.Errorf("%w; deleting its ports failed: %v", err, derr)
		}
		return sdk.Result{ID: n.ID, Err: apiError(ctx, "boot server "+name, err)}
	}
	return d.await(ctx, r, n, s.ID)
}

// await waits until a node's server is ACTIVE and describes it. A server
// that goes ERROR is deleted and fails the node with Nova's fault; ctx's
// deadline leaves the server to the create the engine retries.
func (d *Driver) await(ctx context.Context, r *resolved, n sdk.Node, id string) sdk.Result {
	name := serverName(r.pr, n)
	var s *servers.Server
	err := gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
		got, err := servers.Get(ctx, r.c.compute, id).Extract()
		if err != nil {
			if gophercloud.ResponseCodeIs(err, 404) {
				return false, fmt.Errorf("server %s (%s) vanished while it booted", name, id)
			}
			return false, apiError(ctx, "read server "+name, err)
		}
		s = got
		return s.Status == "ACTIVE" || s.Status == "ERROR", nil
	})
	if err != nil {
		if ctx.Err() != nil {
			st, _ := json.Marshal(state{ServerID: id})
			status := "not read"
			if s != nil {
				status = s.Status
			}
			return sdk.Result{ID: n.ID, PhysicalID: id, State: st,
				Err: sdk.Retryable(fmt.Errorf("server %s (%s) was not ACTIVE within the action's timeout (status %s): %w", name, id, status, ctx.Err()))}
		}
		return sdk.Result{ID: n.ID, Err: err}
	}
	if s.Status == "ERROR" {
		reason := s.Fault.Message
		if reason == "" {
			reason = "Nova gave no fault"
		}
		err := fmt.Errorf("server %s (%s) went ERROR: %s", name, id, reason)
		if derr := d.discard(context.WithoutCancel(ctx), r, n, id); derr != nil {
			err = fmt.Errorf("%w; deleting it failed: %v", err, derr)
		}
		return sdk.Result{ID: n.ID, Err: err}
	}
	var neutron map[string]any
	if r.usesNeutron() {
		if neutron, err = d.finishNeutron(ctx, r, n, id); err != nil {
			if derr := d.discard(context.WithoutCancel(ctx), r, n, id); derr != nil {
				err = fmt.Errorf("%w; deleting it failed: %v", err, derr)
			}
			return sdk.Result{ID: n.ID, Err: err}
		}
	}
	res := result(n, *s)
	maps.Copy(res.Data, neutron)
	res.Healthy = true
	res.Reason = "server ACTIVE"
	return res
}

// deleteAndWait deletes a server and waits, at most limit, until Nova no
// longer lists it; a server already gone is success.
func deleteAndWait(ctx context.Context, c *clients, id string, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	if err := servers.Delete(ctx, c.compute, id).ExtractErr(); err != nil {
		if gophercloud.ResponseCodeIs(err, 404) {
			return nil
		}
		return apiError(ctx, "delete server "+id, err)
	}
	err := gophercloud.WaitFor(ctx, func(ctx context.Context) (bool, error) {
		s, err := servers.Get(ctx, c.compute, id).Extract()
		if gophercloud.ResponseCodeIs(err, 404) {
			return true, nil
		}
		if err != nil {
			return false, err
		}
		return s.Status == "DELETED" || s.Status == "SOFT_DELETED", nil
	})
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
			return sdk.Retryable(fmt.Errorf("server %s was still there when the time ran out", id))
		}
		return apiError(ctx, "wait for server "+id+" to go", err)
	}
	return nil
}

// result is a node's result for its server: physical id, state and data
// (server id, host where the credentials see it, zone, addresses).
func result(n sdk.Node, s servers.Server) sdk.Result {
	st, _ := json.Marshal(state{ServerID: s.ID})
	data := map[string]any{"server_id": s.ID, "server_name": s.Name, "status": s.Status}
	if s.Host != "" {
		data["host"] = s.Host
	}
	if s.HypervisorHostname != "" {
		data["hypervisor_hostname"] = s.HypervisorHostname
	}
	if s.AvailabilityZone != "" {
		data["zone"] = s.AvailabilityZone
	}
	addrs, ips := addresses(s)
	data["addresses"] = addrs
	data["ip_addresses"] = ips
	if len(ips) > 0 {
		data["address"] = ips[0]
	}
	pl := map[string]any{}
	if raw, ok := n.Data["placement"].(map[string]any); ok {
		for k, v := range raw {
			pl[k] = v
		}
	}
	if s.AvailabilityZone != "" {
		// Senlin records the zone the server landed in.
		pl["zone"] = s.AvailabilityZone
	}
	if len(pl) > 0 {
		data["placement"] = pl
	}
	return sdk.Result{ID: n.ID, PhysicalID: s.ID, State: st, Data: data}
}

// addresses lists a server's addresses per network and all of them in
// network order.
func addresses(s servers.Server) (map[string]any, []any) {
	byNet := map[string]any{}
	ips := []any{}
	nets := make([]string, 0, len(s.Addresses))
	for k := range s.Addresses {
		nets = append(nets, k)
	}
	sort.Strings(nets)
	for _, net := range nets {
		list, _ := s.Addresses[net].([]any)
		var addrs []any
		for _, a := range list {
			if m, ok := a.(map[string]any); ok {
				if ip, ok := m["addr"].(string); ok {
					addrs = append(addrs, ip)
					ips = append(ips, ip)
				}
			}
		}
		byNet[net] = addrs
	}
	return byNet, ips
}
