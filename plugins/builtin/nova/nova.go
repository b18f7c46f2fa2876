// Package nova is the os.nova.server profile driver: each node is an
// OpenStack Nova server, driven with gophercloud v2. Its properties are
// Senlin's, so a Senlin server spec works unchanged. Credentials come the
// way OpenStack users keep them (clouds.yaml, OS_CLOUD, OS_* variables, or
// an endpoint and token for a cloud without Keystone), and a profile's
// Senlin `context` picks the region or project.
//
// Files: nova.go (the type, its schema and properties), conn.go
// (credentials and clients), resolve.go (names resolved to ids at submit
// time), create.go (batched boots), check.go (batched checks),
// lifecycle.go (delete, update, recover), networks.go (interfaces plugged
// and unplugged by an update), operations.go (node operations), hosts.go
// (the Hosts hook), adopt.go (existing servers adopted), region.go (each
// node's calls in its placement's region).
package nova

import (
	"context"
	"errors"
	"strconv"
	"sync"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is the profile type, Senlin's.
const TypeName = "os.nova.server"

// Metadata keys Senlin (and so Grove) writes on every server: they tie a
// server back to its node, so a create retried after a crash finds the
// server an earlier attempt booted.
const (
	keyNode    = "cluster_node_id"
	keyCluster = "cluster_id"
	keyIndex   = "cluster_node_index"
)

// bootConcurrency bounds the servers one Create call boots at once: Nova
// queues builds in its scheduler and conductor, and a 50-node batch must
// not open 50 boots (and 50 pollers) at once.
const bootConcurrency = 10

// Properties is what an os.nova.server profile says, as Spec.Decode reads
// it.
type Properties struct {
	Context          Context           `json:"context"`
	AdminPass        string            `json:"admin_pass"`
	AutoDiskConfig   bool              `json:"auto_disk_config"`
	AvailabilityZone string            `json:"availability_zone"`
	BlockDevices     []BlockDevice     `json:"block_device_mapping_v2"`
	ConfigDrive      *bool             `json:"config_drive"`
	Flavor           string            `json:"flavor"`
	Image            string            `json:"image"`
	KeyName          string            `json:"key_name"`
	Metadata         map[string]string `json:"metadata"`
	Name             string            `json:"name"`
	Networks         []Network         `json:"networks"`
	Personality      []File            `json:"personality"`
	SchedulerHints   map[string]any    `json:"scheduler_hints"`
	SecurityGroups   []string          `json:"security_groups"`
	UserData         string            `json:"user_data"`
}

// Context is Senlin's per-profile security context: which cloud, region
// and project the servers live in. What it leaves empty comes from the
// agent's clouds.yaml or OS_* variables.
type Context struct {
	Cloud             string `json:"cloud"`
	RegionName        string `json:"region_name"`
	ProjectID         string `json:"project_id"`
	ProjectName       string `json:"project_name"`
	ProjectDomainID   string `json:"project_domain_id"`
	ProjectDomainName string `json:"project_domain_name"`
}

// BlockDevice is one item of block_device_mapping_v2.
type BlockDevice struct {
	UUID                string `json:"uuid"`
	SourceType          string `json:"source_type"`
	DestinationType     string `json:"destination_type"`
	DiskBus             string `json:"disk_bus"`
	DeviceName          string `json:"device_name"`
	VolumeSize          int    `json:"volume_size"`
	GuestFormat         string `json:"guest_format"`
	BootIndex           *int   `json:"boot_index"`
	DeviceType          string `json:"device_type"`
	DeleteOnTermination bool   `json:"delete_on_termination"`
	VolumeType          string `json:"volume_type"`
}

// Network is one item of networks.
type Network struct {
	Network         string   `json:"network"`
	Port            string   `json:"port"`
	VNICType        string   `json:"vnic_type"`
	FixedIP         string   `json:"fixed_ip"`
	SecurityGroups  []string `json:"security_groups"`
	FloatingNetwork string   `json:"floating_network"`
	FloatingIP      string   `json:"floating_ip"`
	Subnet          string   `json:"subnet"`
}

// File is one item of personality.
type File struct {
	Path     string `json:"path"`
	Contents string `json:"contents"`
}

func str(desc string) *schema.Property {
	return &schema.Property{Type: schema.String, Description: desc}
}

// Schema is the os.nova.server schema: Senlin's properties, defaults and
// updatable flags.
func Schema() schema.Schema {
	strs := &schema.Property{Type: schema.String}
	return schema.Schema{
		"context": {Type: schema.Map, Description: "Senlin's security context: which clouds.yaml cloud, region and project the servers live in. " +
			"What it leaves out comes from OS_CLOUD and the clouds.yaml, or the OS_* variables, in the agent's environment.",
			Schema: schema.Schema{
				"cloud":               str("The clouds.yaml cloud (default: OS_CLOUD)."),
				"region_name":         str("The region (default: the cloud's, or OS_REGION_NAME)."),
				"project_id":          str("The project the servers belong to, by id."),
				"project_name":        str("The project the servers belong to, by name."),
				"project_domain_id":   str("The domain of project_name, by id."),
				"project_domain_name": str("The domain of project_name, by name."),
			}},
		"admin_pass":        {Type: schema.String, Sensitive: true, Updatable: true, Description: "The root (administrator) password of each server; changed in place."},
		"auto_disk_config":  {Type: schema.Boolean, Default: true, Description: "Let Nova resize the root partition to the flavor's disk (OS-DCF:diskConfig AUTO); false is MANUAL."},
		"availability_zone": {Type: schema.String, Description: "The availability zone of the servers (a placement policy's zone wins)."},
		"block_device_mapping_v2": {Type: schema.List, Description: "Block devices of each server (Nova's block_device_mapping_v2).",
			Elem: &schema.Property{Type: schema.Map, Schema: schema.Schema{
				"uuid": str("The id of the image, snapshot or volume the device is made from."),
				"source_type": {Type: schema.String, Required: true, Description: "What the device is made from.",
					Constraints: []schema.Constraint{schema.AllowedValues("image", "snapshot", "volume", "blank")}},
				"destination_type": {Type: schema.String, Required: true, Description: "A volume, or local (ephemeral) storage.",
					Constraints: []schema.Constraint{schema.AllowedValues("volume", "local")}},
				"disk_bus":              str("The disk bus (virtio, scsi, ide ...)."),
				"device_name":           str("The device name in the guest (/dev/vdb)."),
				"volume_size":           {Type: schema.Integer, Required: true, Description: "The size in GiB.", Constraints: []schema.Constraint{schema.Range(schema.F(0), nil)}},
				"guest_format":          str("The file system of a local device (ext4, swap ...)."),
				"boot_index":            {Type: schema.Integer, Description: "The boot order: 0 is the boot device, -1 not bootable."},
				"device_type":           str("disk or cdrom."),
				"delete_on_termination": {Type: schema.Boolean, Description: "Delete the volume with the server."},
				"volume_type":           str("The volume type of a new volume."),
			}}},
		"config_drive": {Type: schema.Boolean, Description: "Attach a config drive to each server."},
		"flavor":       {Type: schema.String, Required: true, Updatable: true, Description: "The flavor, by name or id; a change resizes the servers (resize, then confirm)."},
		"image":        {Type: schema.String, Updatable: true, Description: "The image, by name or id; a change rebuilds the servers. Leave it out to boot from a volume (block_device_mapping_v2)."},
		"key_name":     {Type: schema.String, Description: "The key pair injected into each server."},
		"metadata":     {Type: schema.Map, Elem: strs, Updatable: true, Description: "Server metadata; changed in place. Grove adds cluster_id, cluster_node_id and cluster_node_index, as Senlin does."},
		"name":         {Type: schema.String, Updatable: true, Description: "The server name (default: the node's name); changed in place."},
		"networks": {Type: schema.List, Updatable: true, Description: "The networks of each server, in order; a change detaches and attaches interfaces. Empty or left out, servers boot with no network. " +
			"An item with vnic_type, security_groups, subnet, floating_network or floating_ip gets a Neutron port (and floating IP) Grove makes before the boot and deletes with the node.",
			Elem: &schema.Property{Type: schema.Map, Schema: schema.Schema{
				"network":          str("The network, by name or id."),
				"port":             str("An existing port, by id."),
				"vnic_type":        str("The vNIC type (binding:vnic_type) of the Neutron port Grove makes for this item (normal, direct, macvtap ...)."),
				"fixed_ip":         str("A fixed IP address on the network (on subnet, when given)."),
				"security_groups":  {Type: schema.List, Elem: strs, Description: "Security groups, by name or id, of the Neutron port Grove makes for this item."},
				"floating_network": str("A network, by name or id, to take a new floating IP from for this item's port; Grove deletes it with the node."),
				"floating_ip":      str("An existing floating IP, by address, to associate with this item's port."),
				"subnet":           str("The subnet, by name or id, of the Neutron port Grove makes for this item."),
			}}},
		"personality": {Type: schema.List, Description: "Files injected into each server (Nova's personality).",
			Elem: &schema.Property{Type: schema.Map, Schema: schema.Schema{
				"path":     {Type: schema.String, Required: true, Description: "The file's path in the guest."},
				"contents": {Type: schema.String, Required: true, Description: "The file's contents."},
			}}},
		"scheduler_hints": {Type: schema.Map, Description: "Hints to Nova's scheduler (group, same_host, different_host ...); a placement policy's server group wins."},
		"security_groups": {Type: schema.List, Elem: strs, Description: "Security groups of each server, by name."},
		"user_data":       {Type: schema.String, Description: "User data for cloud-init, as text; Grove base64-encodes it."},
	}
}

// Operations are the recovery operations, the first being what health
// recovery uses, as Senlin's: RECREATE deletes the server and boots a new
// one, REBUILD rebuilds it from its image, REBOOT reboots it (HARD unless
// the parameters say type SOFT).
var Operations = []string{"RECREATE", "REBUILD", "REBOOT"}

// Type returns the profile type registration.
func Type() sdk.ProfileType {
	d := New()
	return sdk.ProfileType{
		Type:     TypeName,
		Versions: []string{"1.0"},
		Description: "Each node is an OpenStack Nova server, through gophercloud, with Senlin's properties. " +
			"Credentials come from clouds.yaml (OS_CLOUD) or the OS_* variables; hosts are Nova's hypervisors and availability zones.",
		Schema:         Schema(),
		Operations:     Operations,
		NodeOperations: NodeOperations(),
		Driver:         d,
		Hosts:          d.Hosts,
		Validate:       d.Validate,
	}
}

// Driver implements sdk.Profile and sdk.Operator. It keeps clients and
// resolved names, both of which it can rebuild at any time: nothing
// durable lives here.
type Driver struct {
	mu       sync.Mutex
	clients  map[string]*clients
	resolved map[string]*resolved // by profile id
}

// New returns a driver with no clients yet.
func New() *Driver {
	return &Driver{clients: map[string]*clients{}, resolved: map[string]*resolved{}}
}

// propsOf decodes a spec's properties, with Senlin's defaults for what a
// spec that skipped the schema leaves out.
func propsOf(p sdk.Spec) (Properties, error) {
	pr := Properties{AutoDiskConfig: true}
	if err := p.Decode(&pr); err != nil {
		return pr, err
	}
	return pr, nil
}

// Validate resolves the profile's image, flavor, networks and key pair
// against the cloud, so an unknown one is an error at submit time naming
// the property and the value.
func (d *Driver) Validate(ctx context.Context, p sdk.Spec) schema.Diagnostics {
	pr, err := propsOf(p)
	if err != nil {
		if de := (*sdk.DecodeError)(nil); errors.As(err, &de) {
			return schema.Diagnostics{de.Diagnostic()}
		}
		return schema.Diagnostics{{Field: "properties", Message: err.Error()}}
	}
	if ds := pr.check(); len(ds) > 0 {
		return ds
	}
	c, err := d.connect(ctx, pr.Context)
	if err != nil {
		return schema.Diagnostics{{Field: "properties.context", Message: err.Error()}}
	}
	_, ds := resolve(ctx, c, pr)
	return ds
}

// check tests what needs no cloud.
func (pr Properties) check() schema.Diagnostics {
	var ds schema.Diagnostics
	if pr.Image == "" && len(pr.BlockDevices) == 0 {
		ds = append(ds, schema.Diagnostic{Field: "properties.image", Message: "is required unless block_device_mapping_v2 gives a boot device."})
	}
	for k := range pr.Metadata {
		if k == keyNode || k == keyCluster || k == keyIndex {
			ds = append(ds, schema.Diagnostic{Field: "properties.metadata." + k, Message: "is set by Grove on every server; choose another key."})
		}
	}
	for i, n := range pr.Networks {
		field := func(k string) string { return "properties.networks[" + strconv.Itoa(i) + "]." + k }
		if n.Network == "" && n.Port == "" {
			ds = append(ds, schema.Diagnostic{Field: "properties.networks[" + strconv.Itoa(i) + "]", Message: "needs a network or a port."})
		}
		if n.Port != "" && (n.Network != "" || n.FixedIP != "") {
			ds = append(ds, schema.Diagnostic{Field: field("port"), Message: "cannot be combined with network or fixed_ip: the port already says both."})
		}
		if n.Port != "" {
			for _, f := range []struct {
				key string
				set bool
			}{{"vnic_type", n.VNICType != ""}, {"security_groups", len(n.SecurityGroups) > 0}, {"subnet", n.Subnet != ""}} {
				if f.set {
					ds = append(ds, schema.Diagnostic{Field: field(f.key), Message: "cannot be combined with port: Grove sets it only on a port it makes for a network."})
				}
			}
		}
		if n.FloatingNetwork != "" && n.FloatingIP != "" {
			ds = append(ds, schema.Diagnostic{Field: field("floating_ip"), Message: "cannot be combined with floating_network: give an existing floating IP, or a network to take a new one from."})
		}
	}
	return ds
}
