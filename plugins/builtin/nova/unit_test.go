package nova

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/volumeattach"

	"github.com/grovehq/grove/plugins/sdk"
)

// TestSchemaIsSenlins: the properties, their types, the required one, the
// updatable ones and the defaults are Senlin's os.nova.server 1.0, so a
// Senlin spec validates unchanged.
func TestSchemaIsSenlins(t *testing.T) {
	s := Schema()
	want := map[string]string{"context": "Map", "admin_pass": "String", "auto_disk_config": "Boolean", "availability_zone": "String",
		"block_device_mapping_v2": "List", "config_drive": "Boolean", "flavor": "String", "image": "String", "key_name": "String",
		"metadata": "Map", "name": "String", "networks": "List", "personality": "List", "scheduler_hints": "Map",
		"security_groups": "List", "user_data": "String"}
	if len(s) != len(want) {
		t.Errorf("%d properties, want %d", len(s), len(want))
	}
	for k, typ := range want {
		if s[k] == nil || s[k].Type != typ {
			t.Errorf("%s: %+v, want type %s", k, s[k], typ)
		}
	}
	var updatable []string
	for k, p := range s {
		if p.Updatable {
			updatable = append(updatable, k)
		}
		if p.Required != (k == "flavor") {
			t.Errorf("%s: required=%v", k, p.Required)
		}
	}
	slices.Sort(updatable)
	if got := strings.Join(updatable, ","); got != "admin_pass,flavor,image,metadata,name,networks" {
		t.Errorf("updatable: %s", got)
	}
	if s["auto_disk_config"].Default != true || !s["admin_pass"].Sensitive {
		t.Errorf("auto_disk_config default %v, admin_pass sensitive %v", s["auto_disk_config"].Default, s["admin_pass"].Sensitive)
	}
	// A Senlin spec (the one in Senlin's docs) validates as is.
	props := map[string]any{"name": "cirros_server", "flavor": "m1.small", "image": "cirros-0.3.5-x86_64-disk", "key_name": "oskey",
		"networks": []any{map[string]any{"network": "private"}}, "metadata": map[string]any{"test_key": "test_value"},
		"user_data": "#!/bin/sh\necho 'hello, world' > /tmp/test_file\n", "context": map[string]any{"region_name": "RegionOne"}}
	if _, ds := s.Validate("properties", props); len(ds) > 0 {
		t.Errorf("a Senlin spec: %v", ds)
	}
	if _, ds := s.Validate("properties", map[string]any{"flavor": "x", "context": map[string]any{"regoin_name": "r"}}); len(ds) != 1 || ds[0].Field != "properties.context.regoin_name" {
		t.Errorf("a bad context key: %v", ds)
	}
}

func TestCheckWithoutCloud(t *testing.T) {
	cases := []struct {
		name  string
		pr    Properties
		field string
	}{
		{"no image nor volume", Properties{Flavor: "f"}, "properties.image"},
		{"grove's metadata key", Properties{Flavor: "f", Image: "i", Metadata: map[string]string{"cluster_node_id": "x"}}, "properties.metadata.cluster_node_id"},
		{"network without network", Properties{Flavor: "f", Image: "i", Networks: []Network{{FixedIP: "10.0.0.3"}}}, "properties.networks[0]"},
		{"floating ip", Properties{Flavor: "f", Image: "i", Networks: []Network{{Network: "n", FloatingNetwork: "public"}}}, "properties.networks[0].floating_network"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ds := c.pr.check()
			if len(ds) != 1 || ds[0].Field != c.field {
				t.Errorf("check = %v, want one diagnostic on %s", ds, c.field)
			}
		})
	}
}

// TestCreateRequest: what one node's boot asks Nova for: Senlin's metadata
// keys, the placement policy's zone and server group, no network when the
// profile lists none, the key pair, disk config and user data.
func TestCreateRequest(t *testing.T) {
	r := &resolved{pr: Properties{Flavor: "m1.tiny", Image: "img", KeyName: "k", AutoDiskConfig: true, AvailabilityZone: "az0",
		Metadata: map[string]string{"role": "web"}, UserData: "#!/bin/sh\n", SchedulerHints: map[string]any{"group": "ignored", "foo": "bar"}},
		imageID: "image-id", flavorID: "1"}
	n := sdk.Node{ID: "node-1", Name: "web-1", Index: 3, ClusterID: "cl-1",
		Data: map[string]any{"placement": map[string]any{"zone": "az1", "servergroup": "1f3a7e52-3b6d-4b8e-9d9a-2a1f0c9e5b11"}}}
	opts, hints, err := createOpts(r, n)
	if err != nil {
		t.Fatal(err)
	}
	body, err := opts.ToServerCreateMap()
	if err != nil {
		t.Fatal(err)
	}
	hb, err := hints.ToSchedulerHintsMap()
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(body["server"])
	var got map[string]any
	_ = json.Unmarshal(b, &got)
	md, _ := got["metadata"].(map[string]any)
	if md["cluster_node_id"] != "node-1" || md["cluster_id"] != "cl-1" || md["cluster_node_index"] != "3" || md["role"] != "web" {
		t.Errorf("metadata %v", md)
	}
	if got["availability_zone"] != "az1" || got["networks"] != "none" || got["key_name"] != "k" || got["OS-DCF:diskConfig"] != "AUTO" ||
		got["name"] != "web-1" || got["imageRef"] != "image-id" || got["flavorRef"] != "1" || got["user_data"] != "IyEvYmluL3NoCg==" {
		t.Errorf("server %s", b)
	}
	sh, _ := hb["os:scheduler_hints"].(map[string]any)
	if sh["group"] != "1f3a7e52-3b6d-4b8e-9d9a-2a1f0c9e5b11" || sh["foo"] != "bar" {
		t.Errorf("hints %v", hb)
	}

	// Text that happens to be base64 is still encoded, as Senlin does.
	r.pr.UserData = "abcd"
	opts, _, _ = createOpts(r, n)
	body, _ = opts.ToServerCreateMap()
	if ud := body["server"].(map[string]any)["user_data"]; ud == nil || *ud.(*string) != "YWJjZA==" {
		t.Errorf("user_data abcd sent as %v", ud)
	}

	r.networks = []servers.Network{{UUID: "net-1"}, {Port: "port-1"}}
	r.pr.Name = "fixed"
	opts, _, _ = createOpts(r, sdk.Node{ID: "n2", Name: "web-2"})
	body, _ = opts.ToServerCreateMap()
	b, _ = json.Marshal(body["server"])
	if !strings.Contains(string(b), `"networks":[{"uuid":"net-1"},{"port":"port-1"}]`) || !strings.Contains(string(b), `"name":"fixed"`) ||
		!strings.Contains(string(b), `"availability_zone":"az0"`) || strings.Contains(string(b), "cluster_id") {
		t.Errorf("server %s", b)
	}
}

func TestCommonPrefix(t *testing.T) {
	for _, c := range []struct {
		in   []string
		want string
	}{{[]string{"web-a1", "web-b2", "web-a3"}, "web-"}, {[]string{"x"}, "x"}, {[]string{"a", "b"}, ""}, {nil, ""}} {
		if got := commonPrefix(c.in); got != c.want {
			t.Errorf("commonPrefix(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestCredentials: the ways a driver finds its cloud, without a cloud to
// log in to: an admin_token cloud in clouds.yaml, the OS_ENDPOINT form,
// and a sentence naming the ways when there is none.
func TestCredentials(t *testing.T) {
	for _, k := range EnvNames() {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	t.Chdir(dir)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(dir, "xdg"))
	ctx := context.Background()
	_, err := New().connect(ctx, Context{})
	if err == nil || !strings.Contains(err.Error(), "OS_CLOUD") || !strings.Contains(err.Error(), "OS_ENDPOINT") {
		t.Errorf("no credentials: %v", err)
	}
	if got := Env()["OS_CLIENT_CONFIG_FILE"]; got != "" {
		t.Errorf("no clouds.yaml, yet Env passes %q", got)
	}

	cfg := filepath.Join(dir, "xdg", "openstack", "clouds.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("clouds:\n  dev:\n    auth_type: admin_token\n    auth:\n      endpoint: http://127.0.0.1:9/v2.1\n      token: admin:admin\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got := Env()["OS_CLIENT_CONFIG_FILE"]; got != cfg {
		t.Errorf("Env passes OS_CLIENT_CONFIG_FILE=%q, want the clouds.yaml the openstack client would read, %s", got, cfg)
	}
	c, err := New().connect(ctx, Context{Cloud: "dev"})
	if err != nil {
		t.Fatal(err)
	}
	if c.compute.Endpoint != "http://127.0.0.1:9/v2.1/" || c.compute.Type != "compute" || c.compute.Microversion != Microversion || c.compute.TokenID != "admin:admin" {
		t.Errorf("admin_token cloud: %+v", c.compute)
	}
	if _, err := New().connect(ctx, Context{Cloud: "nope"}); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("an unknown cloud: %v", err)
	}

	t.Setenv("OS_AUTH_TYPE", "admin_token")
	t.Setenv("OS_ENDPOINT", "http://127.0.0.1:9/v2.1/")
	t.Setenv("OS_TOKEN", "u:p")
	c, err = New().connect(ctx, Context{})
	if err != nil || c.compute.TokenID != "u:p" || c.image != nil {
		t.Errorf("OS_ENDPOINT: %+v %v", c, err)
	}
	t.Setenv("OS_TOKEN", "")
	if _, err := New().connect(ctx, Context{}); err == nil || !strings.Contains(err.Error(), "token") {
		t.Errorf("an endpoint without a token: %v", err)
	}
}

func TestAPIErrorShowsNovasMessage(t *testing.T) {
	ue := gophercloud.ErrUnexpectedResponseCode{Actual: 400, Body: []byte(`{"badRequest": {"message": "Invalid flavorRef provided.", "code": 400}}`)}
	err := apiError(context.Background(), "boot server web-1", ue)
	if err.Error() != "boot server web-1: Invalid flavorRef provided (HTTP 400)" {
		t.Errorf("message %q", err)
	}
	if !gophercloud.ResponseCodeIs(err, 400) || sdk.IsRetryable(err) {
		t.Errorf("the status is lost or a 400 is retryable: %v", err)
	}
	if err := apiError(context.Background(), "x", gophercloud.ErrUnexpectedResponseCode{Actual: 503}); !sdk.IsRetryable(err) {
		t.Errorf("a 503 should be retryable: %v", err)
	}
	cut, cancel := context.WithCancel(context.Background())
	cancel()
	if err := apiError(cut, "x", errors.New("boom")); !sdk.IsRetryable(err) || !errors.Is(err, context.Canceled) {
		t.Errorf("a cut context: %v", err)
	}
}

func TestNetworkDiff(t *testing.T) {
	a, b, c := servers.Network{UUID: "a"}, servers.Network{UUID: "b"}, servers.Network{Port: "p"}
	gone, added := networkDiff([]servers.Network{a, b, a}, []servers.Network{a, c, b})
	if len(gone) != 1 || gone[0] != a || len(added) != 1 || added[0] != c {
		t.Errorf("networkDiff = %v, %v; want one a gone and the port added", gone, added)
	}
	if gone, added := networkDiff(nil, nil); gone != nil || added != nil {
		t.Errorf("no networks: %v %v", gone, added)
	}
}

// TestAdoptedPropertiesVolumeBooted: a server booted from a volume (Nova
// reports no image) is described by its root volume as
// block_device_mapping_v2, its networks by the names of its fixed
// addresses (a floating address's network is not one of them), its
// security groups once each, and binary user data is left out.
func TestAdoptedPropertiesVolumeBooted(t *testing.T) {
	root := "/dev/vda"
	ud := "H4sIAAAAAAAA/w==" // gzip: no text form
	s := servers.Server{ID: "s1", Name: "db", Flavor: map[string]any{"original_name": "m1.large"}, RootDeviceName: &root, Userdata: &ud,
		AttachedVolumes: []servers.AttachedVolume{{ID: "data-vol"}, {ID: "root-vol"}},
		Addresses: map[string]any{
			"public":  []any{map[string]any{"addr": "203.0.113.5", "OS-EXT-IPS:type": "floating"}},
			"private": []any{map[string]any{"addr": "10.0.0.5", "OS-EXT-IPS:type": "fixed"}},
			"backend": []any{map[string]any{"addr": "10.1.0.5", "OS-EXT-IPS:type": "fixed"}},
		},
		SecurityGroups: []map[string]any{{"name": "web"}, {"name": "web"}, {"name": "ssh"}},
		Metadata:       map[string]string{"cluster_node_id": "old", "cluster_node_index": "3"}}
	attached := []volumeattach.VolumeAttachment{{VolumeID: "data-vol", Device: "/dev/vdb"}, {VolumeID: "root-vol", Device: "/dev/vda"}}
	got, err := adoptedProperties(s, attached, []string{"ignored-when-addresses-say"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"name": "db", "flavor": "m1.large", "auto_disk_config": false, "config_drive": false,
		"block_device_mapping_v2": []any{map[string]any{"uuid": "root-vol", "source_type": "volume", "destination_type": "volume", "boot_index": 0, "volume_size": 0}},
		"networks":                []any{map[string]any{"network": "backend"}, map[string]any{"network": "private"}},
		"security_groups":         []any{"web", "ssh"}}
	gb, _ := json.Marshal(got)
	wb, _ := json.Marshal(want)
	if string(gb) != string(wb) {
		t.Errorf("properties:\n got %s\nwant %s", gb, wb)
	}
	if _, err := adoptedProperties(servers.Server{ID: "s2", Name: "x", Flavor: map[string]any{"id": "1"}}, nil, nil); err == nil || !strings.Contains(err.Error(), "neither an image nor a volume") {
		t.Errorf("a server with no image and no volume: %v", err)
	}
}
