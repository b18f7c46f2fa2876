package nova

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
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
		{"floating network and floating ip", Properties{Flavor: "f", Image: "i", Networks: []Network{{Network: "n", FloatingNetwork: "public", FloatingIP: "172.24.4.9"}}}, "properties.networks[0].floating_ip"},
		{"security groups on a given port", Properties{Flavor: "f", Image: "i", Networks: []Network{{Port: "p", SecurityGroups: []string{"web"}}}}, "properties.networks[0].security_groups"},
		{"subnet on a given port", Properties{Flavor: "f", Image: "i", Networks: []Network{{Port: "p", Subnet: "s"}}}, "properties.networks[0].subnet"},
	}
	// What Grove makes a port for passes check (the cloud resolves it).
	ok := Properties{Flavor: "f", Image: "i", Networks: []Network{{Network: "n", Subnet: "s", FixedIP: "10.0.0.3", SecurityGroups: []string{"web"},
		VNICType: "normal", FloatingNetwork: "public"}, {Port: "p", FloatingIP: "172.24.4.9"}}}
	if ds := ok.check(); len(ds) != 0 {
		t.Errorf("port options: %v", ds)
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
	opts, hints, err := createOpts(r, n, r.networks)
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
	opts, _, _ = createOpts(r, n, r.networks)
	body, _ = opts.ToServerCreateMap()
	if ud := body["server"].(map[string]any)["user_data"]; ud == nil || *ud.(*string) != "YWJjZA==" {
		t.Errorf("user_data abcd sent as %v", ud)
	}

	r.networks = []servers.Network{{UUID: "net-1"}, {Port: "port-1"}}
	r.pr.Name = "fixed"
	opts, _, _ = createOpts(r, sdk.Node{ID: "n2", Name: "web-2"}, r.networks)
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
	if c != nil && c.network != nil {
		t.Errorf("OS_ENDPOINT alone names no Neutron, got %+v", c.network)
	}
	t.Setenv("OS_NETWORK_ENDPOINT_OVERRIDE", "http://127.0.0.1:9696")
	c, err = New().connect(ctx, Context{})
	if err != nil || c.network == nil || c.network.ResourceBase != "http://127.0.0.1:9696/v2.0/" || c.network.TokenID != "u:p" {
		t.Errorf("OS_NETWORK_ENDPOINT_OVERRIDE: %+v %v", c, err)
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
	a, b, c := netEntry{Net: servers.Network{UUID: "a"}}, netEntry{Net: servers.Network{UUID: "b"}}, netEntry{Net: servers.Network{Port: "p"}}
	gone, added := networkDiff([]netEntry{a, b, a}, []netEntry{a, c, b})
	if len(gone) != 1 || gone[0] != a || len(added) != 1 || added[0] != c {
		t.Errorf("networkDiff = %v, %v; want one a gone and the port added", gone, added)
	}
	// The same network with a Grove port (a key) is another interface.
	k := netEntry{Net: servers.Network{UUID: "a"}, Key: "k1"}
	if gone, added := networkDiff([]netEntry{a}, []netEntry{k}); len(gone) != 1 || gone[0] != a || len(added) != 1 || added[0] != k {
		t.Errorf("networkDiff(a, a with a port) = %v, %v", gone, added)
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

// regionCloud serves one region's compute endpoint for
// TestRegionPicksTheComputeClient: it answers a server listing with none
// and a server read with 404, and records the paths it was asked.
type regionCloud struct {
	mu    sync.Mutex
	paths []string
	srv   *httptest.Server
}

func newRegionCloud(t *testing.T) *regionCloud {
	rc := &regionCloud{}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rc.mu.Lock()
		rc.paths = append(rc.paths, r.URL.Path+"?"+r.URL.RawQuery)
		rc.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasSuffix(r.URL.Path, "/servers/detail") {
			_, _ = w.Write([]byte(`{"servers": []}`))
			return
		}
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte(`{"itemNotFound": {"code": 404, "message": "Instance could not be found."}}`))
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

func (rc *regionCloud) asked() string {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	return strings.Join(rc.paths, " ")
}

// TestRegionPicksTheComputeClient: a node whose data.placement has a
// region_name (the region placement policy's) is served by the compute
// endpoint of that region of the profile's cloud, a node without one by
// the cloud's own, in one batch; a region the cloud does not list, and a
// region on a cloud that is an endpoint and token listing none, are
// errors naming the region.
func TestRegionPicksTheComputeClient(t *testing.T) {
	base, east, west := newRegionCloud(t), newRegionCloud(t), newRegionCloud(t)
	for _, k := range EnvNames() {
		t.Setenv(k, "")
	}
	dir := t.TempDir()
	yaml := `clouds:
  multi:
    auth_type: admin_token
    auth: {endpoint: "` + base.srv.URL + `/v2.1/", token: "admin:admin"}
    region_name: RegionOne
    regions:
      - RegionOne
      - name: east
        values: {auth: {endpoint: "` + east.srv.URL + `/v2.1/"}}
      - name: west
        values: {compute_endpoint_override: "` + west.srv.URL + `/v2.1/"}
  single:
    auth_type: admin_token
    auth: {endpoint: "` + base.srv.URL + `/v2.1/", token: "admin:admin"}
`
	if err := os.WriteFile(filepath.Join(dir, "clouds.yaml"), []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OS_CLIENT_CONFIG_FILE", filepath.Join(dir, "clouds.yaml"))
	ctx := context.Background()
	d := New()
	p := sdk.Spec{ID: "p", Name: "p", Type: TypeName, Version: "1.0", Properties: map[string]any{"flavor": "m1.tiny", "image": "img",
		"context": map[string]any{"cloud": "multi"}}}
	node := func(name, region string) sdk.Node {
		n := sdk.Node{ID: name + "-id", Name: name, PhysicalID: name + "-server", Data: map[string]any{}}
		if region != "" {
			n.Data["placement"] = map[string]any{"region_name": region}
		}
		return n
	}
	res := d.Check(ctx, p, []sdk.Node{node("in-east", "east"), node("at-home", ""), node("in-west", "west"), node("in-one", "RegionOne")})
	for i, r := range res {
		if r.Healthy || !strings.Contains(r.Reason, "missing") {
			t.Errorf("result %d: %+v, want the server missing", i, r)
		}
	}
	for who, want := range map[*regionCloud][]string{east: {"in-east"}, west: {"in-west"}, base: {"at-home", "in-one"}} {
		got := who.asked()
		for _, name := range want {
			if !strings.Contains(got, name) {
				t.Errorf("the endpoint of %s was not asked for %s: %s", strings.Join(want, ", "), name, got)
			}
		}
		for _, other := range []string{"in-east", "at-home", "in-west", "in-one"} {
			if !slices.Contains(want, other) && strings.Contains(got, other) {
				t.Errorf("the endpoint of %s was asked for %s: %s", strings.Join(want, ", "), other, got)
			}
		}
	}

	r := d.Create(ctx, p, []sdk.Node{node("lost", "mars")})[0]
	if r.Err == nil || !strings.Contains(r.Err.Error(), `has no region "mars"`) || !strings.Contains(r.Err.Error(), "RegionOne, east, west") {
		t.Errorf("a region the cloud does not list: %v", r.Err)
	}
	lost := node("lost", "mars")
	lost.PhysicalID = ""
	if r := d.Delete(ctx, p, []sdk.Node{lost})[0]; r.Err != nil {
		t.Errorf("deleting a node that got no server for want of its region: %v", r.Err)
	}
	single := sdk.Spec{ID: "s", Name: "s", Type: TypeName, Version: "1.0", Properties: map[string]any{"flavor": "m1.tiny", "image": "img",
		"context": map[string]any{"cloud": "single"}}}
	if r := d.Delete(ctx, single, []sdk.Node{node("far", "east")})[0]; r.Err == nil || !strings.Contains(r.Err.Error(), `cloud "single"`) || !strings.Contains(r.Err.Error(), `no region "east"`) {
		t.Errorf("a region on an endpoint and token cloud that lists none: %v", r.Err)
	}
	t.Setenv("OS_AUTH_TYPE", "admin_token")
	t.Setenv("OS_ENDPOINT", base.srv.URL+"/v2.1/")
	t.Setenv("OS_TOKEN", "admin:admin")
	bare := sdk.Spec{ID: "b", Name: "b", Type: TypeName, Version: "1.0", Properties: map[string]any{"flavor": "m1.tiny", "image": "img"}}
	if r := d.Check(ctx, bare, []sdk.Node{node("far", "east")})[0]; r.Healthy || !strings.Contains(r.Reason+fmt.Sprint(r.Err), `no region "east"`) {
		t.Errorf("a region on OS_ENDPOINT: %+v", r)
	}
}

// TestSpecInRegion: the spec moved to a region carries it in its context
// and an ID of its own (names resolve per region); moving it to its own
// region changes nothing.
func TestSpecInRegion(t *testing.T) {
	p := sdk.Spec{ID: "p", Properties: map[string]any{"flavor": "f", "context": map[string]any{"cloud": "c"}}}
	q := specIn(p, "east")
	if cx := q.Properties["context"].(map[string]any); cx["region_name"] != "east" || cx["cloud"] != "c" || q.ID != "p@east" {
		t.Errorf("in east: %+v", q)
	}
	if p.Properties["context"].(map[string]any)["region_name"] != nil {
		t.Error("specIn changed the profile's own properties")
	}
	if r := specIn(q, "east"); r.ID != "p@east" {
		t.Errorf("moved twice: %+v", r)
	}
	if r := specIn(p, ""); r.ID != "p" {
		t.Errorf("no region: %+v", r)
	}
}

// TestPortKeys: which items Grove makes Neutron things for, and that an
// item's key changes with anything its port or floating IP depends on
// (so an update replugs it) and not otherwise.
func TestPortKeys(t *testing.T) {
	for _, c := range []struct {
		n    Network
		want bool
	}{
		{Network{Network: "n"}, false},
		{Network{Network: "n", FixedIP: "10.0.0.3"}, false},
		{Network{Port: "p"}, false},
		{Network{Network: "n", Subnet: "s"}, true},
		{Network{Network: "n", SecurityGroups: []string{"web"}}, true},
		{Network{Network: "n", VNICType: "direct"}, true},
		{Network{Network: "n", FloatingNetwork: "public"}, true},
		{Network{Port: "p", FloatingIP: "172.24.4.9"}, true},
	} {
		if got := needsNeutron(c.n); got != c.want {
			t.Errorf("needsNeutron(%+v) = %v", c.n, got)
		}
	}
	net := servers.Network{UUID: "net-1"}
	base := portSpec{Make: true, SubnetID: "s1", SecurityGroups: []string{"g1"}}
	if (portSpec{}).key(net) != "" {
		t.Error("an item with nothing for Grove to make has a key")
	}
	k := base.key(net)
	if k == "" || k != base.key(net) {
		t.Fatalf("key %q is not stable", k)
	}
	for name, other := range map[string]struct {
		s   portSpec
		net servers.Network
	}{
		"another subnet":    {portSpec{Make: true, SubnetID: "s2", SecurityGroups: []string{"g1"}}, net},
		"another group":     {portSpec{Make: true, SubnetID: "s1", SecurityGroups: []string{"g2"}}, net},
		"a floating IP":     {portSpec{Make: true, SubnetID: "s1", SecurityGroups: []string{"g1"}, FloatingNetworkID: "pub"}, net},
		"a fixed IP":        {base, servers.Network{UUID: "net-1", FixedIP: "10.0.0.3"}},
		"another network":   {base, servers.Network{UUID: "net-2"}},
		"another vNIC type": {portSpec{Make: true, SubnetID: "s1", SecurityGroups: []string{"g1"}, VNICType: "direct"}, net},
	} {
		if other.s.key(other.net) == k {
			t.Errorf("%s: same key %s", name, k)
		}
	}
	if !strings.HasPrefix(portName("node-1", k), portName("node-1", "")) {
		t.Errorf("portName(node-1, %s) = %s", k, portName("node-1", k))
	}
}
