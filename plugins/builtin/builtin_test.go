package builtin_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"
	"github.com/moby/moby/client"

	"github.com/grovehq/grove/internal/containertest"
	"github.com/grovehq/grove/internal/novatest"
	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/internal/vcsimtest"
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/sdktest"
)

// TestConformance runs the SDK's conformance kit against the built-in
// plugin, served out of process by `grove plugin serve` as in production.
func TestConformance(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "grove")
	if err := testbin.Build(bin, "../.."); err != nil {
		t.Fatal(err)
	}
	freePort := func(int) map[string]any {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		return map[string]any{"port": l.Addr().(*net.TCPAddr).Port}
	}
	profiles := []sdktest.ProfileCase{
		{Type: "local.process", Version: "1.0", NodeData: freePort,
			Properties: map[string]any{"command": []any{"sleep", "300"}, "stop_timeout": 2},
			Updated:    map[string]any{"command": []any{"sleep", "301"}, "stop_timeout": 2, "env": map[string]any{"A": "b"}}},
		{Type: "grove.noop", Version: "1.0", Properties: map[string]any{}, Updated: map[string]any{"label": "v2"}, BatchSize: 50, NoBackend: true},
	}
	// container.docker runs against a real engine: Podman's Docker API in CI.
	dockerHost, err := containertest.Ensure()
	if err == nil {
		props := map[string]any{"image": container.DemoImage, "network": "host", "stop_timeout": 1}
		profiles = append(profiles, sdktest.ProfileCase{Type: "container.docker", Version: "1.0", NodeData: freePort,
			Properties: props, Updated: map[string]any{"image": container.DemoImage, "network": "host", "stop_timeout": 1, "memory": 128}})
	} else if os.Getenv("CI") != "" {
		t.Fatal(err)
	} else {
		t.Logf("container.docker not exercised: %v", err)
	}
	// vsphere.vm runs against the vSphere simulator, in this process.
	sim := vcsimtest.New(t)
	profiles = append(profiles, sdktest.ProfileCase{Type: "vsphere.vm", Version: "1.0",
		Properties: map[string]any{"cluster": vcsimtest.Cluster, "template": vcsimtest.Template, "memory_mb": 128},
		Updated:    map[string]any{"cluster": vcsimtest.Cluster, "template": vcsimtest.Template, "memory_mb": 256}})
	env := sim.Env()
	var nova *novatest.Nova
	// os.nova.server runs against a real Nova (Debian's), when it can run
	// here; CI installs it.
	if err := novatest.Available(); err == nil || os.Getenv("CI") != "" {
		n := novatest.Shared(t)
		nova = n
		env = append(env, n.Env()...)
		profiles = append(profiles, sdktest.ProfileCase{Type: "os.nova.server", Version: "1.0",
			Properties: map[string]any{"flavor": "m1.tiny", "image": n.ImageName, "metadata": map[string]any{"v": "1"}},
			Updated:    map[string]any{"flavor": "m1.tiny", "image": n.ImageName, "metadata": map[string]any{"v": "2"}}})
	} else {
		t.Logf("os.nova.server not exercised: %v", err)
	}
	sdktest.Run(t, sdktest.Options{Command: []string{bin, "plugin", "serve"}, Env: env}, profiles,
		[]sdktest.PolicyCase{
			{Type: "senlin.policy.deletion", Version: "1.1", Properties: map[string]any{"criteria": "OLDEST_FIRST"}},
			{Type: "senlin.policy.scaling", Version: "1.0", Properties: map[string]any{"event": "CLUSTER_SCALE_OUT"}, Action: "CLUSTER_SCALE_OUT"},
			{Type: "senlin.policy.scaling", Version: "1.0", Properties: map[string]any{"event": "CLUSTER_SCALE_IN"}, Cluster: &sdk.Cluster{MaxSize: -1}},
		})
	if dockerHost != "" {
		noContainersLeft(t, dockerHost)
	}
	if nova != nil {
		noServersLeft(t, nova)
	}
}

// noServersLeft waits until no server of the kit's nodes remains in Nova,
// including one a create cut by its deadline booted after the kit deleted
// its node.
func noServersLeft(t *testing.T, n *novatest.Nova) {
	c := n.Compute("2.56")
	deadline := time.Now().Add(time.Minute)
	for {
		pages, err := servers.List(c, servers.ListOpts{}).AllPages(context.Background())
		var left []string
		if err == nil {
			all, _ := servers.ExtractServers(pages)
			for _, s := range all {
				if s.Metadata["cluster_id"] == "sdktest-cluster" {
					left = append(left, s.Name+" "+s.Status)
				}
			}
			if len(left) == 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Errorf("servers outlived the conformance run: %v %v", left, err)
			return
		}
		time.Sleep(200 * time.Millisecond) // polling interval
	}
}

// noContainersLeft waits until no container of the kit's nodes remains,
// including any a create cut by its deadline made after the kit deleted it.
func noContainersLeft(t *testing.T, host string) {
	eng, err := client.New(client.WithHost(host))
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		items, err := containertest.ClusterContainers(context.Background(), eng, "sdktest-cluster")
		// Podman's list can fail while a container is being removed.
		if err == nil && len(items) == 0 {
			return
		}
		if time.Now().After(deadline) {
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range items {
				t.Errorf("container %v (%s) outlived the conformance run", c.Names, c.State)
			}
			return
		}
		time.Sleep(200 * time.Millisecond) // polling interval
	}
}
