package nova

import (
	"context"
	"encoding/base64"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"unicode/utf8"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/attachinterfaces"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"

	"github.com/grovehq/grove/plugins/sdk"
)

// serverUUID is what a Nova server id looks like; any other identity is a
// server name.
var serverUUID = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// Adopt takes over an existing Nova server of the agent's cloud (OS_CLOUD
// or the OS_* variables), by its id or its unique name, as Senlin's
// do_adopt does: its flavor, image (or, booted from a volume, its boot
// volume as block_device_mapping_v2), key pair, name, metadata (less the
// keys Grove writes), networks, security groups, availability zone, config
// drive, disk config and user data become the profile's properties. The
// server is left as it is; from then on it is checked, operated on,
// updated and deleted as the node's. Its admin password, personality files
// and scheduler hints cannot be read back from Nova and are left out. With
// req.Snapshot the server is snapshotted (Nova's createImage) and the
// snapshot is the profile's image.
func (d *Driver) Adopt(ctx context.Context, req sdk.AdoptRequest) (sdk.Adoption, error) {
	c, err := d.connect(ctx, Context{})
	if err != nil {
		return sdk.Adoption{}, err
	}
	s, err := findServer(ctx, c, req.Identity)
	if err != nil {
		return sdk.Adoption{}, err
	}
	switch s.Status {
	case "DELETED", "SOFT_DELETED":
		return sdk.Adoption{}, fmt.Errorf("server %s (%s) is %s and cannot be adopted", s.Name, s.ID, s.Status)
	}
	var attached []volumeattach.VolumeAttachment
	if s.Image["id"] == nil && len(s.AttachedVolumes) > 0 {
		pages, err := volumeattach.List(c.compute, s.ID).AllPages(ctx)
		if err != nil {
			return sdk.Adoption{}, apiError(ctx, "list the volumes of server "+s.Name, err)
		}
		if attached, err = volumeattach.ExtractVolumeAttachments(pages); err != nil {
			return sdk.Adoption{}, err
		}
	}
	// Addresses are filled in from Neutron's cache, which may lag (or,
	// in Nova's own test fixtures, stay empty): the interfaces say the
	// networks then.
	var netIDs []string
	if len(s.Addresses) == 0 {
		pages, err := attachinterfaces.List(c.compute, s.ID).AllPages(ctx)
		if err != nil && !gophercloud.ResponseCodeIs(err, 404) && !gophercloud.ResponseCodeIs(err, 501) {
			return sdk.Adoption{}, apiError(ctx, "list the interfaces of server "+s.Name, err)
		}
		if err == nil {
			ifs, err := attachinterfaces.ExtractInterfaces(pages)
			if err != nil {
				return sdk.Adoption{}, err
			}
			for _, f := range ifs {
				netIDs = append(netIDs, f.NetID)
			}
		}
	}
	props, err := adoptedProperties(*s, attached, netIDs)
	if err != nil {
		return sdk.Adoption{}, err
	}
	if req.Preview {
		return sdk.Adoption{Properties: props, Result: sdk.Result{PhysicalID: s.ID}}, nil
	}
	res := result(req.Node, *s)
	if req.Snapshot {
		// Senlin's intent for its snapshot flag: the snapshot's image
		// is what new nodes of the profile boot from. Nova answers with
		// the image's id at once and uploads it after; a boot from it
		// before Glance has it active is refused by Nova, saying so.
		name := fmt.Sprintf("%s-adopted-%s", s.Name, req.Node.ID)
		id, err := servers.CreateImage(ctx, c.compute, s.ID, servers.CreateImageOpts{Name: name, Metadata: map[string]string{keyNode: req.Node.ID}}).ExtractImageID()
		if err != nil {
			return sdk.Adoption{}, apiError(ctx, "snapshot server "+s.Name, err)
		}
		props["image"] = id
		// A volume-backed server's snapshot image maps its volumes'
		// snapshots itself.
		delete(props, "block_device_mapping_v2")
		res.Data["snapshot_image"] = id
	}
	return sdk.Adoption{Properties: props, Result: res}, nil
}

// findServer reads a server by id, or finds the one server with this exact
// name.
func findServer(ctx context.Context, c *clients, identity string) (*servers.Server, error) {
	if identity == "" {
		return nil, fmt.Errorf("identity must be a Nova server id or name")
	}
	if serverUUID.MatchString(identity) {
		s, err := servers.Get(ctx, c.compute, identity).Extract()
		if gophercloud.ResponseCodeIs(err, 404) {
			return nil, fmt.Errorf("%s has no server with id %s", c.where, identity)
		}
		if err != nil {
			return nil, apiError(ctx, "read server "+identity, err)
		}
		return s, nil
	}
	pages, err := servers.List(c.compute, servers.ListOpts{Name: "^" + regexp.QuoteMeta(identity) + "$"}).AllPages(ctx)
	if err != nil {
		return nil, apiError(ctx, "list the servers named "+identity, err)
	}
	all, err := servers.ExtractServers(pages)
	if err != nil {
		return nil, err
	}
	var ids []string
	var found *servers.Server
	for i, s := range all {
		if s.Name == identity && s.Status != "DELETED" && s.Status != "SOFT_DELETED" {
			ids, found = append(ids, s.ID), &all[i]
		}
	}
	switch len(ids) {
	case 0:
		return nil, fmt.Errorf("%s has no server with id or name %q", c.where, identity)
	case 1:
		return found, nil
	}
	sort.Strings(ids)
	return nil, fmt.Errorf("%d servers of %s are named %q (%v); give the id of the one to adopt", len(ids), c.where, identity, ids)
}

// adoptedProperties is the os.nova.server spec that describes a server as
// Nova reports it (at Microversion, where the flavor is given by name), and
// its volume attachments when it booted from a volume. Its networks are
// those of its addresses, by name, else netIDs (of its interfaces).
func adoptedProperties(s servers.Server, attached []volumeattach.VolumeAttachment, netIDs []string) (map[string]any, error) {
	props := map[string]any{
		"name":             s.Name,
		"auto_disk_config": s.DiskConfig == servers.Auto,
		"config_drive":     s.ConfigDrive,
	}
	flavor, _ := s.Flavor["original_name"].(string)
	if flavor == "" {
		flavor, _ = s.Flavor["id"].(string)
	}
	if flavor == "" {
		return nil, fmt.Errorf("server %s (%s) has no flavor in what Nova reported", s.Name, s.ID)
	}
	props["flavor"] = flavor
	if id, _ := s.Image["id"].(string); id != "" {
		props["image"] = id
	} else {
		boot := bootVolume(s, attached)
		if boot == "" {
			return nil, fmt.Errorf("server %s (%s) has neither an image nor a volume it booted from", s.Name, s.ID)
		}
		// Nova ignores volume_size for an existing volume; the schema
		// wants one, and 0 says "as the volume is".
		props["block_device_mapping_v2"] = []any{map[string]any{"uuid": boot, "source_type": "volume", "destination_type": "volume",
			"boot_index": 0, "volume_size": 0}}
	}
	if s.KeyName != "" {
		props["key_name"] = s.KeyName
	}
	if s.AvailabilityZone != "" {
		props["availability_zone"] = s.AvailabilityZone
	}
	md := map[string]any{}
	for k, v := range s.Metadata {
		if k != keyNode && k != keyCluster && k != keyIndex {
			md[k] = v
		}
	}
	if len(md) > 0 {
		props["metadata"] = md
	}
	nets := make([]string, 0, len(s.Addresses))
	for name, list := range s.Addresses {
		addrs, _ := list.([]any)
		if slices.ContainsFunc(addrs, func(a any) bool {
			m, _ := a.(map[string]any)
			t, _ := m["OS-EXT-IPS:type"].(string)
			return t == "" || t == "fixed"
		}) {
			nets = append(nets, name)
		}
	}
	sort.Strings(nets)
	if len(nets) == 0 {
		nets = netIDs
	}
	if len(nets) > 0 {
		list := make([]any, len(nets))
		for i, n := range nets {
			list[i] = map[string]any{"network": n}
		}
		props["networks"] = list
	}
	var groups []any
	for _, g := range s.SecurityGroups {
		if name, _ := g["name"].(string); name != "" && !slices.Contains(groups, any(name)) {
			groups = append(groups, name)
		}
	}
	if len(groups) > 0 {
		props["security_groups"] = groups
	}
	if s.Userdata != nil && *s.Userdata != "" {
		// The property is text Grove encodes; binary user data (gzip)
		// has no text form and is left for an override to give.
		if b, err := base64.StdEncoding.DecodeString(*s.Userdata); err == nil && utf8.Valid(b) {
			props["user_data"] = string(b)
		}
	}
	return props, nil
}

// bootVolume is the volume a server booted from: the one attached as its
// root device, else the first attached.
func bootVolume(s servers.Server, attached []volumeattach.VolumeAttachment) string {
	if s.RootDeviceName != nil {
		for _, a := range attached {
			if a.Device == *s.RootDeviceName {
				return a.VolumeID
			}
		}
	}
	if len(attached) > 0 {
		return attached[0].VolumeID
	}
	if len(s.AttachedVolumes) > 0 {
		return s.AttachedVolumes[0].ID
	}
	return ""
}
