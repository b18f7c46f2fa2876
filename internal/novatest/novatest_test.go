package novatest_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/availabilityzones"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/flavors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/hypervisors"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servergroups"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/gophercloud/gophercloud/v2/openstack/image/v2/images"

	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/internal/proctest"
	"github.com/grovehq/grove/internal/pyharness"
)

// The microversion the contract is written at: server groups' single
// "policy" (2.64) and "networks": "none" (2.37) are there.
const microversion = "2.79"

func flavorID(t *testing.T, c *gophercloud.ServiceClient, name string) string {
	t.Helper()
	pages, err := flavors.ListDetail(c, nil).AllPages(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	all, err := flavors.ExtractFlavors(pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range all {
		if f.Name == name {
			return f.ID
		}
	}
	t.Fatalf("no flavor %s among %v", name, all)
	return ""
}

// boot creates a server with no network and removes it when the test ends.
func boot(t *testing.T, n *novatest.Nova, c *gophercloud.ServiceClient, name, flavor string, hints servers.SchedulerHintOptsBuilder) string {
	t.Helper()
	ctx := context.Background()
	s, err := servers.Create(ctx, c, servers.CreateOpts{
		Name: name, ImageRef: n.ImageID, FlavorRef: flavor, Networks: "none",
	}, hints).Extract()
	if err != nil {
		t.Fatalf("create server %s: %v", name, err)
	}
	t.Cleanup(func() { deleteServer(t, c, s.ID) })
	return s.ID
}

func deleteServer(t *testing.T, c *gophercloud.ServiceClient, id string) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := servers.Delete(ctx, c, id).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("delete server %s: %v", id, err)
		return
	}
	for {
		_, err := servers.Get(ctx, c, id).Extract()
		if gophercloud.ResponseCodeIs(err, 404) {
			return
		}
		if ctx.Err() != nil {
			t.Errorf("server %s still there a minute after its delete: %v", id, err)
			return
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestContractBootsServerToActive(t *testing.T) {
	n := novatest.Shared(t)
	c := n.Compute(microversion)
	id := boot(t, n, c, "contract-boot", flavorID(t, c, "m1.tiny"), nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := novatest.WaitServer(ctx, c, id, "ACTIVE", "ERROR")
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != "ACTIVE" {
		t.Fatalf("server is %s (%s), want ACTIVE", s.Status, s.Fault.Message)
	}
	// The admin-only host attribute is visible to the harness's token.
	if !slices.Contains(n.Hosts, s.Host) {
		t.Errorf("server's host %q is not one of %v", s.Host, n.Hosts)
	}
	if s.Image["id"] != n.ImageID {
		t.Errorf("server's image is %v, want %s", s.Image["id"], n.ImageID)
	}
}

func TestContractAntiAffinitySpreadsAndFourthIsNoValidHost(t *testing.T) {
	n := novatest.Shared(t)
	if len(n.Hosts) != 3 {
		t.Fatalf("the contract assumes 3 hosts, the harness has %v", n.Hosts)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	c := n.Compute(microversion)
	g, err := servergroups.Create(ctx, c, servergroups.CreateOpts{Name: "contract-anti", Policy: "anti-affinity"}).Extract()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = servergroups.Delete(context.Background(), c, g.ID).ExtractErr() })
	if g.Policy == nil || *g.Policy != "anti-affinity" {
		t.Fatalf("group policy is %v, want anti-affinity", g.Policy)
	}
	flavor := flavorID(t, c, "m1.tiny")
	hints := servers.SchedulerHintOpts{Group: g.ID}
	var hosts []string
	for i := range 3 {
		id := boot(t, n, c, fmt.Sprintf("contract-anti-%d", i), flavor, hints)
		s, err := novatest.WaitServer(ctx, c, id, "ACTIVE", "ERROR")
		if err != nil {
			t.Fatal(err)
		}
		if s.Status != "ACTIVE" {
			t.Fatalf("server %d is %s (%s), want ACTIVE", i, s.Status, s.Fault.Message)
		}
		hosts = append(hosts, s.Host)
	}
	slices.Sort(hosts)
	want := slices.Clone(n.Hosts)
	slices.Sort(want)
	if !slices.Equal(hosts, want) {
		t.Fatalf("anti-affinity servers landed on %v, want one on each of %v", hosts, want)
	}
	id := boot(t, n, c, "contract-anti-3", flavor, hints)
	s, err := novatest.WaitServer(ctx, c, id, "ACTIVE", "ERROR")
	if err != nil {
		t.Fatal(err)
	}
	if s.Status != "ERROR" || !strings.Contains(s.Fault.Message, "No valid host was found") {
		t.Fatalf("the 4th anti-affinity server on 3 hosts is %s with fault %q, want ERROR with NoValidHost", s.Status, s.Fault.Message)
	}
}

func TestContractHypervisorsAndZones(t *testing.T) {
	n := novatest.Shared(t)
	ctx := context.Background()
	c := n.Compute(microversion)
	pages, err := hypervisors.List(c, nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hs, err := hypervisors.ExtractHypervisors(pages)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, h := range hs {
		names = append(names, h.HypervisorHostname)
		if h.State != "up" || h.Status != "enabled" {
			t.Errorf("hypervisor %s is %s/%s, want up/enabled", h.HypervisorHostname, h.State, h.Status)
		}
	}
	slices.Sort(names)
	want := slices.Clone(n.Hosts)
	slices.Sort(want)
	if !slices.Equal(names, want) {
		t.Errorf("hypervisors are %v, want %v", names, want)
	}
	if !slices.ContainsFunc(n.Hosts, func(h string) bool { return strings.Contains(h, "drs") }) {
		t.Errorf("no host has drs in its name: %v", n.Hosts)
	}

	pages, err = availabilityzones.ListDetail(c).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	zones, err := availabilityzones.ExtractAvailabilityZones(pages)
	if err != nil {
		t.Fatal(err)
	}
	var computeZone *availabilityzones.AvailabilityZone
	for i := range zones {
		for _, h := range n.Hosts {
			if _, ok := zones[i].Hosts[h]; ok {
				computeZone = &zones[i]
			}
		}
	}
	if computeZone == nil || !computeZone.ZoneState.Available {
		t.Fatalf("no available zone holds the compute hosts: %+v", zones)
	}
	for _, h := range n.Hosts {
		if _, ok := computeZone.Hosts[h]; !ok {
			t.Errorf("zone %s lacks host %s: %+v", computeZone.ZoneName, h, computeZone.Hosts)
		}
	}
}

func TestContractImagesByName(t *testing.T) {
	n := novatest.Shared(t)
	ctx := context.Background()
	for name, id := range map[string]string{n.ImageName: n.ImageID, n.Image2Name: n.Image2ID} {
		pages, err := images.List(n.Image(), images.ListOpts{Name: name}).AllPages(ctx)
		if err != nil {
			t.Fatal(err)
		}
		found, err := images.ExtractImages(pages)
		if err != nil {
			t.Fatal(err)
		}
		if len(found) != 1 || found[0].ID != id || found[0].Status != images.ImageStatusActive {
			t.Errorf("images named %s: %+v, want one active image %s", name, found, id)
		}
		img, err := images.Get(ctx, n.Image(), id).Extract()
		if err != nil || img.Name != name {
			t.Errorf("image %s: %+v, %v; want name %s", id, img, err, name)
		}
	}
	_, err := images.Get(ctx, n.Image(), "00000000-0000-0000-0000-000000000000").Extract()
	if !gophercloud.ResponseCodeIs(err, 404) {
		t.Errorf("a missing image gave %v, want a 404", err)
	}
}

// A second harness asked for the port of a running one refuses to start
// (eventlet would otherwise share it through SO_REUSEPORT).
func TestHarnessRefusesTakenPort(t *testing.T) {
	n := novatest.Shared(t)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(strings.TrimSuffix(n.Endpoint, "/v2.1/"), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	second, err := novatest.Start(ctx, t.TempDir(), novatest.Options{Listen: "127.0.0.1:" + port})
	if err == nil {
		second.Stop()
		t.Fatal("a second harness started on a taken port")
	}
	if !strings.Contains(err.Error(), "cannot listen on 127.0.0.1:"+port) {
		t.Fatalf("error %q does not say the port is taken", err)
	}
}

// The harness runs the compute hosts asked for, stops on SIGTERM, and
// exits, removing its directory, when the process that started it is gone.
func TestHarnessDiesWithParentAndStops(t *testing.T) {
	novatest.Need(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	hosts := []string{"one", "two-drs"}
	n, err := novatest.Start(ctx, t.TempDir(), novatest.Options{Hosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(n.Hosts, hosts) {
		t.Errorf("hosts %v, want %v", n.Hosts, hosts)
	}
	pages, err := hypervisors.List(n.Compute(microversion), nil).AllPages(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hs, _ := hypervisors.ExtractHypervisors(pages)
	if len(hs) != len(hosts) || !slices.ContainsFunc(hs, func(h hypervisors.Hypervisor) bool { return h.HypervisorHostname == "two-drs" }) {
		t.Errorf("hypervisors of a harness with hosts %v: %+v", hosts, hs)
	}
	pid := n.Pid()
	n.Stop()
	if proctest.Live(pid) {
		t.Fatalf("harness %d still runs after Stop", pid)
	}

	// A shell starts the harness in the background and is then killed.
	script, err := novatest.WriteHarness(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pyharness.CheckDiesWithParent(ctx, t, script)
}

// scripts/nova.sh up starts the harness in the background and prints the
// variables an agent needs; a second up reuses it; down stops it.
func TestNovaScriptUpDown(t *testing.T) {
	novatest.Need(t)
	dir := t.TempDir()
	run := func(arg string) string {
		t.Helper()
		cmd := exec.Command("../../scripts/nova.sh", arg)
		cmd.Env = append(os.Environ(), "GROVE_NOVA_DIR="+dir)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("nova.sh %s: %v\n%s", arg, err, out)
		}
		return string(out)
	}
	t.Cleanup(func() { run("down") })
	vars := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(run("up")), "\n") {
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			t.Fatalf("nova.sh up printed %q, not KEY=VALUE", line)
		}
		vars[k] = v
	}
	for k, want := range map[string]string{"OS_AUTH_TYPE": "admin_token", "OS_TOKEN": "admin:admin", "OS_PROJECT_ID": "admin",
		"GROVE_NOVA_HOSTS": "host-a,host-b,host-drs-1", "GROVE_NOVA_CLOUDS_YAML": filepath.Join(dir, "clouds.yaml")} {
		if vars[k] != want {
			t.Errorf("%s=%q, want %q", k, vars[k], want)
		}
	}
	if !strings.HasPrefix(vars["OS_ENDPOINT"], "http://127.0.0.1:") || !strings.HasSuffix(vars["OS_ENDPOINT"], "/v2.1/") {
		t.Errorf("OS_ENDPOINT=%q, want http://127.0.0.1:PORT/v2.1/", vars["OS_ENDPOINT"])
	}
	yaml, err := os.ReadFile(vars["GROVE_NOVA_CLOUDS_YAML"])
	if err != nil || !strings.Contains(string(yaml), `"grove-nova"`) || !strings.Contains(string(yaml), vars["OS_ENDPOINT"]) {
		t.Errorf("clouds.yaml: %v\n%s", err, yaml)
	}
	pid, _ := strconv.Atoi(vars["GROVE_NOVA_PID"])
	if !proctest.Live(pid) {
		t.Fatalf("harness %d is not running after up", pid)
	}
	// The API answers with the token printed, and lists the flavors by name.
	req, _ := http.NewRequest("GET", vars["OS_ENDPOINT"]+"flavors", nil)
	req.Header.Set("X-Auth-Token", vars["OS_TOKEN"])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"m1.tiny"`) {
		t.Errorf("GET flavors: %s %s", resp.Status, body)
	}
	if again := run("up"); !strings.Contains(again, "OS_ENDPOINT="+vars["OS_ENDPOINT"]) {
		t.Errorf("a second up printed another endpoint:\n%s", again)
	}
	// With python3-neutron installed, a real Neutron runs beside Nova and
	// the clouds.yaml points at it; down stops it too.
	npid := 0
	if novatest.AvailableNeutron() == nil {
		ep := vars["GROVE_NOVA_NETWORK_ENDPOINT"]
		if !strings.HasPrefix(ep, "http://127.0.0.1:") || vars["GROVE_NEUTRON_ENDPOINT"] != ep || vars["GROVE_NEUTRON_NETWORK"] == "" {
			t.Errorf("GROVE_NOVA_NETWORK_ENDPOINT=%q GROVE_NEUTRON_ENDPOINT=%q GROVE_NEUTRON_NETWORK=%q", ep, vars["GROVE_NEUTRON_ENDPOINT"], vars["GROVE_NEUTRON_NETWORK"])
		}
		if !strings.Contains(string(yaml), `"network_endpoint_override": "`+ep+`"`) {
			t.Errorf("clouds.yaml has no network_endpoint_override %s:\n%s", ep, yaml)
		}
		resp, err := http.Get(ep + "v2.0/networks?name=" + vars["GROVE_NEUTRON_NETWORK"])
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || !strings.Contains(string(body), vars["GROVE_NEUTRON_NETWORK_ID"]) {
			t.Errorf("GET networks: %s %s", resp.Status, body)
		}
		npid, _ = strconv.Atoi(vars["GROVE_NEUTRON_PID"])
		if !proctest.Live(npid) {
			t.Errorf("Neutron %d is not running after up", npid)
		}
	}
	run("down")
	if proctest.Live(pid) {
		t.Errorf("harness %d still runs after down", pid)
	}
	if npid != 0 && proctest.Live(npid) {
		t.Errorf("Neutron %d still runs after down", npid)
	}
}

// Without the Debian packages, scripts/nova.sh up and Available name them
// and the command that installs them. dpkg-query is replaced by one that
// knows no package.
func TestMissingPackagesAreNamed(t *testing.T) {
	bin := t.TempDir()
	if err := os.WriteFile(filepath.Join(bin, "dpkg-query"), []byte("#!/bin/sh\necho \"dpkg-query: no packages found matching $3\" >&2\nexit 1\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	const install = "apt-get install -y --no-install-recommends " + novatest.Packages
	err := novatest.Available()
	if err == nil || !strings.Contains(err.Error(), install) || !strings.Contains(err.Error(), "python3-nova, python3-placement") {
		t.Errorf("Available: %v, want the missing packages and %q", err, install)
	}
	dir := t.TempDir()
	cmd := exec.Command("../../scripts/nova.sh", "up")
	cmd.Env = append(os.Environ(), "GROVE_NOVA_DIR="+dir)
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), install) {
		t.Errorf("nova.sh up without the packages: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(dir, "nova.pid")); !os.IsNotExist(err) {
		t.Errorf("nova.sh up started something without the packages: %v", err)
	}
}
