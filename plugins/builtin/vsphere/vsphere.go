// Package vsphere is the vsphere.vm profile driver: each node is a virtual
// machine cloned from a template on vCenter (or ESXi), driven with govmomi.
// The compute clusters' ESXi hosts are the hosts Grove places nodes on, and
// the driver manages the DRS rules a placement policy asks for (drs.go).
//
// Files: vsphere.go (the type, its schema and properties), conn.go
// (sessions), inventory.go (inventory paths resolved at submit time),
// create.go (clones), check.go (batched checks), lifecycle.go (delete,
// update, recover, operations), hosts.go (the Hosts hook), drs.go (rules),
// adopt.go (existing VMs adopted).
package vsphere

import (
	"context"
	"errors"
	"sync"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is the profile type.
const TypeName = "vsphere.vm"

// Keys of the extraConfig Grove writes on its VMs: they tie a VM back to
// its node and cluster, so a create retried after a crash finds its VM and
// a VM of the same name made by someone else is never taken for it.
const (
	keyNode    = "grove.node_id"
	keyCluster = "grove.cluster_id"
)

// cloneConcurrency bounds the clones one Create call runs at once: vCenter
// queues tasks beyond what its hosts take, and a 50-node batch must not
// open 50 provisioning streams at once.
const cloneConcurrency = 8

// Properties is what a vsphere.vm profile says, as Spec.Decode reads it.
type Properties struct {
	Connection    Connection        `json:"connection"`
	Datacenter    string            `json:"datacenter"`
	Cluster       string            `json:"cluster"`
	ResourcePool  string            `json:"resource_pool"`
	Host          string            `json:"host"`
	Folder        string            `json:"folder"`
	Datastore     string            `json:"datastore"`
	Template      string            `json:"template"`
	AdoptedFrom   string            `json:"adopted_from"`
	Snapshot      string            `json:"snapshot"`
	NumCPUs       int32             `json:"num_cpus"`
	MemoryMB      int64             `json:"memory_mb"`
	Networks      []string          `json:"networks"`
	Disks         []int64           `json:"disks"`
	Annotation    string            `json:"annotation"`
	Customization *Customization    `json:"customization"`
	ExtraConfig   map[string]string `json:"extra_config"`
	PowerOn       bool              `json:"power_on"`
	WaitForIP     bool              `json:"wait_for_ip"`
	WaitTimeout   int               `json:"wait_timeout"`
}

// Connection says how to reach vCenter; what it leaves empty comes from
// the plugin config, then the GOVC_* or VSPHERE_* variables (conn.go).
type Connection struct {
	URL        string `json:"url"`
	Username   string `json:"username"`
	Password   string `json:"password"`
	Insecure   *bool  `json:"insecure"`
	Thumbprint string `json:"thumbprint"`
}

// Customization is the guest customization applied to each clone.
type Customization struct {
	Hostname    string   `json:"hostname"`
	Domain      string   `json:"domain"`
	DHCP        *bool    `json:"dhcp"`
	IPAddresses []string `json:"ip_addresses"`
	Netmask     string   `json:"netmask"`
	Gateway     string   `json:"gateway"`
	DNSServers  []string `json:"dns_servers"`
}

func str(desc string) *schema.Property {
	return &schema.Property{Type: schema.String, Description: desc}
}

// Schema is the vsphere.vm schema. Inventory names are paths or names as
// govc takes them ("DC0", "/DC0/host/DC0_C0", "LocalDS_0").
func Schema() schema.Schema {
	strs := &schema.Property{Type: schema.String}
	return schema.Schema{
		"connection": {Type: schema.Map, Updatable: true, Description: "How to reach vCenter; a change (rotated credentials) leaves the VMs as they are. Anything left out comes from the agent config's plugin \"builtin\" block (vsphere_url, vsphere_username, " +
			"vsphere_password, vsphere_insecure, vsphere_thumbprint), else from GOVC_URL, GOVC_USERNAME, GOVC_PASSWORD, " +
			"GOVC_INSECURE and GOVC_TLS_THUMBPRINT (or VSPHERE_SERVER, VSPHERE_USER, VSPHERE_PASSWORD, VSPHERE_ALLOW_UNVERIFIED_SSL) in the agent's environment.",
			Schema: schema.Schema{
				// The URL may carry user:password@, so it is as secret as the password.
				"url":        {Type: schema.String, Sensitive: true, Description: "The SDK URL, https://vcenter.example.com/sdk, or a host name."},
				"username":   str("The user name (default: the URL's, or GOVC_USERNAME)."),
				"password":   {Type: schema.String, Sensitive: true, Description: "The password (default: the URL's, or GOVC_PASSWORD). Prefer the environment."},
				"insecure":   {Type: schema.Boolean, Description: "Skip TLS verification (default: GOVC_INSECURE)."},
				"thumbprint": str("The SHA-1 thumbprint of vCenter's certificate, trusted without a CA."),
			}},
		"datacenter":    {Type: schema.String, Description: "The datacenter (default: GOVC_DATACENTER, or the only one)."},
		"cluster":       {Type: schema.String, Description: "The compute cluster the VMs run in; its root resource pool unless resource_pool is set, and where DRS rules go."},
		"resource_pool": {Type: schema.String, Description: "The resource pool (default: the cluster's root pool, or GOVC_RESOURCE_POOL)."},
		"host":          {Type: schema.String, Description: "Pin every VM to this ESXi host (default: the placement policy's choice, else the template's host)."},
		"folder":        {Type: schema.String, Description: "The VM folder the clones go in (default: the datacenter's VM folder)."},
		"datastore":     {Type: schema.String, Description: "The datastore of the clones (default: the template's)."},
		"template":      {Type: schema.String, Updatable: true, Description: "The VM or template cloned for each node; a change replaces the VMs. Required, unless the profile was made by adopting a VM (adopted_from)."},
		"adopted_from": {Type: schema.String, Updatable: true, Description: "The inventory path of the VM this profile was made from by node adoption (POST /v1/nodes/adopt), which writes it. " +
			"Without a template such a profile describes that VM only: creating nodes from it, recreating its VM and changes that replace VMs are refused until a template is given."},
		"snapshot": {Type: schema.String, Updatable: true, Description: "A snapshot of the template: the clones are linked clones on it. A change replaces the VMs."},
		"num_cpus": {Type: schema.Integer, Updatable: true, Description: "Virtual CPUs (default: the template's); changed by reconfigure, with a power cycle only when CPU hot-add is off.",
			Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(768))}},
		"memory_mb": {Type: schema.Integer, Updatable: true, Description: "Memory in MiB (default: the template's); changed by reconfigure, with a power cycle only when memory hot-add is off.",
			Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(24<<20))}},
		"networks": {Type: schema.List, Elem: strs, Updatable: true, Description: "Port groups of the VM's network cards, in order: the template's cards are moved onto them, and cards are added for the rest. A change replaces the VMs."},
		"disks": {Type: schema.List, Updatable: true, Description: "Sizes in GiB of extra disks added to each clone. A change replaces the VMs.",
			Elem: &schema.Property{Type: schema.Integer, Constraints: []schema.Constraint{schema.Range(schema.F(1), schema.F(62*1024))}}},
		"annotation": {Type: schema.String, Updatable: true, Description: "The VM's notes; changed in place."},
		"customization": {Type: schema.Map, Updatable: true, Description: "Guest customization (Linux prep). A change replaces the VMs.",
			Schema: schema.Schema{
				"hostname":     str("The guest host name (default: the node's name)."),
				"domain":       {Type: schema.String, Default: "local", Description: "The guest domain."},
				"dhcp":         {Type: schema.Boolean, Description: "Take addresses from DHCP (the default unless ip_addresses are given)."},
				"ip_addresses": {Type: schema.List, Elem: strs, Description: "Static IPv4 addresses: node index 1 takes the first, and so on."},
				"netmask":      str("The netmask of the static addresses."),
				"gateway":      str("The default gateway of the static addresses."),
				"dns_servers":  {Type: schema.List, Elem: strs, Description: "DNS servers."},
			}},
		"extra_config": {Type: schema.Map, Elem: strs, Updatable: true, Description: "extraConfig (advanced settings) keys and values; grove.* keys are Grove's. A change replaces the VMs."},
		"power_on":     {Type: schema.Boolean, Default: true, Description: "Power the clones on."},
		"wait_for_ip":  {Type: schema.Boolean, Default: false, Updatable: true, Description: "Wait until VMware Tools report an IP address before a node is ACTIVE."},
		"wait_timeout": {Type: schema.Integer, Default: int64(300), Updatable: true, Description: "Seconds to wait for the IP address.", Constraints: []schema.Constraint{schema.Range(schema.F(1), schema.F(3600))}},
	}
}

// Operations are the recovery operations, the first being what health
// recovery uses: REBOOT powers a stopped VM on, resets a running one and
// clones a missing one again; RECREATE and REBUILD replace the VM.
var Operations = []string{"REBOOT", "RECREATE", "REBUILD"}

// Type returns the profile type registration.
func Type() sdk.ProfileType {
	d := New()
	return sdk.ProfileType{
		Type:     TypeName,
		Versions: []string{"1.0"},
		Description: "Each node is a virtual machine cloned from a template on vSphere (vCenter or ESXi), through govmomi. " +
			"Hosts are the compute clusters' ESXi hosts; DRS rules are named after the Grove cluster.",
		Schema:         Schema(),
		Operations:     Operations,
		NodeOperations: NodeOperations(),
		Driver:         d,
		Hosts:          d.Hosts,
		Validate:       d.Validate,
	}
}

// Driver implements sdk.Profile. It keeps sessions and resolved inventory,
// both of which it can rebuild at any time: nothing durable lives here.
type Driver struct {
	mu       sync.Mutex
	sessions map[string]*session
	resolved map[string]*inventory // by profile id
	// hostNames caches ESXi host names by managed object id.
	hostNames map[string]string
	// defaults fill in what profiles leave out: the plugin config's, then
	// the environment's.
	defaults defaults
}

// New returns a driver with no sessions yet, reading its defaults from
// the plugin config (GROVE_PLUGIN_CONFIG, keys ConfigKeys) and the
// environment.
func New() *Driver {
	return &Driver{sessions: map[string]*session{}, resolved: map[string]*inventory{}, hostNames: map[string]string{}, defaults: pluginDefaults()}
}

// propsOf decodes a spec's properties.
func propsOf(p sdk.Spec) (Properties, error) {
	var pr Properties
	pr.PowerOn = true
	pr.WaitTimeout = 300
	if err := p.Decode(&pr); err != nil {
		return pr, err
	}
	return pr, nil
}

// Validate resolves the profile's inventory paths against vCenter, so an
// unknown datacenter, template, pool or network is an error at submit time
// naming the property and the value.
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
	s, err := d.session(ctx, pr.Connection)
	if err != nil {
		return schema.Diagnostics{{Field: "properties.connection", Message: err.Error()}}
	}
	_, ds := resolve(ctx, s, pr, d.defaults)
	return ds
}

// check tests what needs no vCenter.
func (pr Properties) check() schema.Diagnostics {
	var ds schema.Diagnostics
	if pr.Template == "" && pr.AdoptedFrom == "" {
		ds = append(ds, schema.Diagnostic{Field: "properties.template", Message: "is required: the VM or template cloned for each node."})
	}
	if c := pr.Customization; c != nil {
		if c.DHCP != nil && !*c.DHCP && len(c.IPAddresses) == 0 {
			ds = append(ds, schema.Diagnostic{Field: "properties.customization.ip_addresses", Message: "is required when dhcp is false."})
		}
		if c.DHCP != nil && *c.DHCP && len(c.IPAddresses) > 0 {
			ds = append(ds, schema.Diagnostic{Field: "properties.customization.ip_addresses", Message: "cannot be set when dhcp is true; set dhcp = false."})
		}
		if len(c.IPAddresses) > 0 && c.Netmask == "" {
			ds = append(ds, schema.Diagnostic{Field: "properties.customization.netmask", Message: "is required when dhcp is false."})
		}
	}
	for k := range pr.ExtraConfig {
		if k == keyNode || k == keyCluster {
			ds = append(ds, schema.Diagnostic{Field: "properties.extra_config." + k, Message: "is set by Grove on every VM; choose another key."})
		}
	}
	return ds
}
