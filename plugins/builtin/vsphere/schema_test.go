package vsphere

import (
	"testing"

	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TestSchemaDescribesEveryProperty: each property issue 14 lists is in the
// schema with its type and a description (nested ones too), the
// replace-or-reconfigure properties are updatable, and the defaults are
// the documented ones.
func TestSchemaDescribesEveryProperty(t *testing.T) {
	s := Type().Schema
	want := map[string]string{
		"connection": schema.Map, "datacenter": schema.String, "cluster": schema.String, "resource_pool": schema.String,
		"host": schema.String, "folder": schema.String, "datastore": schema.String, "template": schema.String, "snapshot": schema.String,
		"num_cpus": schema.Integer, "memory_mb": schema.Integer, "networks": schema.List, "disks": schema.List, "annotation": schema.String,
		"customization": schema.Map, "extra_config": schema.Map, "power_on": schema.Boolean, "wait_for_ip": schema.Boolean, "wait_timeout": schema.Integer,
	}
	for name, typ := range want {
		if p := s[name]; p == nil || p.Type != typ {
			t.Errorf("property %s: %+v, want type %s", name, p, typ)
		}
	}
	var walk func(prefix string, s schema.Schema)
	walk = func(prefix string, s schema.Schema) {
		for name, p := range s {
			if p.Description == "" {
				t.Errorf("property %s%s has no description", prefix, name)
			}
			walk(prefix+name+".", p.Schema)
		}
	}
	walk("", s)
	for _, name := range []string{"url", "username", "password", "insecure", "thumbprint"} {
		if s["connection"].Schema[name] == nil {
			t.Errorf("connection.%s is missing", name)
		}
	}
	for _, name := range []string{"hostname", "dhcp", "ip_addresses", "netmask", "gateway", "dns_servers"} {
		if s["customization"].Schema[name] == nil {
			t.Errorf("customization.%s is missing", name)
		}
	}
	for _, name := range []string{"template", "snapshot", "num_cpus", "memory_mb", "annotation", "customization", "networks", "disks", "extra_config",
		"connection", "wait_for_ip", "wait_timeout"} {
		if !s[name].Updatable {
			t.Errorf("%s must be updatable (reconfigured or replaced by the rolling update)", name)
		}
	}
	for name, def := range map[string]any{"power_on": true, "wait_for_ip": false, "wait_timeout": int64(300)} {
		if s[name].Default != def {
			t.Errorf("%s defaults to %v, want %v", name, s[name].Default, def)
		}
	}
}
