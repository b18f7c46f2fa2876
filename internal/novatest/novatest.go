// Package novatest runs a real OpenStack Nova for Grove's tests: Debian
// bookworm's Nova 26 (Zed) stood up in one Python process by Nova's own
// functional-test base (nova_harness.py, run with /usr/bin/python3): SQLite
// in memory, fake:// messaging, Placement in process, the real scheduler and
// conductor, fake-driver compute hosts (host-a, host-b, host-drs-1) and the
// real osapi_compute WSGI application with noauth2 on a loopback port, plus
// a read-only Glance v2 image API under /image/.
//
// The real scheduler enforces server groups: anti-affinity spreads servers
// across hosts and a server with no host left ends ERROR with NoValidHost.
// Everything runs in one eventlet process, so concurrency is not realistic,
// but every code path is Nova's. scripts/nova.sh runs the same harness in
// the background for development.
package novatest

import (
	"context"
	"embed"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/servers"

	"github.com/grovehq/grove/internal/pyharness"
)

//go:embed nova_harness.py api-paste.ini neutron_harness.py
var harnessFiles embed.FS

// Python is the interpreter the harness runs under (pyharness.Python).
const Python = pyharness.Python

// Packages are the Debian packages the harness needs.
const Packages = "python3-nova python3-placement python3-oslotest python3-wsgi-intercept python3-requests-mock python3-ddt"

// NeutronPackages are the Debian packages a Nova with a real Neutron
// (Options.Neutron) needs beside Packages.
const NeutronPackages = "python3-neutron"

// Token is the noauth2 token: user "admin" (an admin) in project "admin".
const Token = "admin:admin"

// ProjectID is the project the token acts in.
const ProjectID = "admin"

// Nova is a running harness.
type Nova struct {
	// Endpoint is the compute endpoint, http://127.0.0.1:PORT/v2.1/.
	Endpoint string
	// ImageEndpoint is the image API's endpoint, http://127.0.0.1:PORT/image/
	// (gophercloud's image v2 client adds v2/).
	ImageEndpoint string
	// Token is the noauth2 token to send as X-Auth-Token.
	Token string
	// ProjectID is the project Token acts in.
	ProjectID string
	// ImageID and ImageName name a bootable image; Image2ID and Image2Name
	// another one, to rebuild to.
	ImageID, ImageName   string
	Image2ID, Image2Name string
	// Flavors are flavor names that exist (m1.tiny and up).
	Flavors []string
	// Hosts are the compute hosts; one of them has "drs" in its name.
	Hosts []string
	// CloudsYAML is a clouds.yaml with this cloud as "grove-nova".
	CloudsYAML string
	// Dir holds the harness's files: its logs (nova.log, access.log,
	// harness.log), env and clouds.yaml.
	Dir string

	// Neutron is the real Neutron Nova uses when Options.Neutron asked
	// for one; nil when Nova uses its own Neutron fixture.
	Neutron *Neutron

	proc *pyharness.Proc
	vars map[string]string
}

// Neutron is a real Neutron (neutron_harness.py): Debian's Neutron 21
// (Zed) API with the ML2 plugin (flat and local networks, a mechanism
// driver that binds every port without agents) and the L3 router plugin,
// on SQLite, with noauth reading X-Auth-Token as USER:PROJECT.
type Neutron struct {
	// Endpoint is http://127.0.0.1:PORT/ (gophercloud adds v2.0/).
	Endpoint string
	// Network and NetworkID name the private network; Subnet, SubnetID and
	// Subnet2 two of its subnets (both routed to the external network).
	Network, NetworkID        string
	Subnet, SubnetID, Subnet2 string
	// ExternalNetwork and ExternalNetworkID name the network floating IPs
	// come from.
	ExternalNetwork, ExternalNetworkID string
	// SecurityGroup and SecurityGroupID name a security group.
	SecurityGroup, SecurityGroupID string

	proc *pyharness.Proc
}

// Available says why the harness cannot run here, or nil when it can.
func Available() error { return available(Packages) }

// AvailableNeutron says why the harness with a real Neutron cannot run
// here, or nil when it can.
func AvailableNeutron() error { return available(Packages + " " + NeutronPackages) }

func available(packages string) error { return pyharness.Available("Nova", packages) }

// Options tune Start.
type Options struct {
	// Listen is HOST:PORT to serve on; 127.0.0.1:0 when empty.
	Listen string
	// Hosts are the compute host names; host-a, host-b, host-drs-1 when empty.
	Hosts []string
	// RemoveDir removes dir when the harness exits.
	RemoveDir bool
	// Neutron runs a real Neutron beside Nova (in its own process, under
	// dir/neutron) and points Nova's network API at it instead of Nova's
	// Neutron fixture.
	Neutron bool
}

// Start runs the harness with its files in dir and returns once Nova
// serves. The harness exits when Stop is called or when this process is
// gone. It takes about 5 seconds on an idle machine, longer on a busy one;
// ctx bounds the wait.
func Start(ctx context.Context, dir string, opts Options) (*Nova, error) {
	check := Available
	if opts.Neutron {
		check = AvailableNeutron
	}
	if err := check(); err != nil {
		return nil, err
	}
	dir, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	script, err := WriteHarness(filepath.Join(dir, "harness"))
	if err != nil {
		return nil, err
	}
	var neutron *Neutron
	if opts.Neutron {
		if neutron, err = startNeutron(ctx, filepath.Join(dir, "neutron"), filepath.Join(dir, "harness", "neutron_harness.py")); err != nil {
			return nil, err
		}
	}
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	args := []string{script, "--state-dir", dir, "--listen", listen, "--die-with-parent"}
	if len(opts.Hosts) > 0 {
		args = append(args, "--hosts", strings.Join(opts.Hosts, ","))
	}
	if opts.RemoveDir {
		args = append(args, "--remove-state-on-exit")
	}
	if neutron != nil {
		args = append(args, "--neutron-endpoint", neutron.Endpoint)
	}
	p, err := pyharness.Start(ctx, "Nova", dir, args, "GROVE_NOVA_READY", "nova.log")
	if err != nil {
		neutron.stop()
		return nil, err
	}
	n := &Nova{Dir: dir, proc: p, vars: p.Vars, Neutron: neutron}
	n.Endpoint = n.vars["OS_ENDPOINT"]
	n.ImageEndpoint = n.vars["GROVE_NOVA_IMAGE_ENDPOINT"]
	n.Token = n.vars["OS_TOKEN"]
	n.ProjectID = n.vars["OS_PROJECT_ID"]
	n.ImageID, n.ImageName = n.vars["GROVE_NOVA_IMAGE_ID"], n.vars["GROVE_NOVA_IMAGE_NAME"]
	n.Image2ID, n.Image2Name = n.vars["GROVE_NOVA_IMAGE2_ID"], n.vars["GROVE_NOVA_IMAGE2_NAME"]
	n.Flavors = strings.Split(n.vars["GROVE_NOVA_FLAVORS"], ",")
	n.Hosts = strings.Split(n.vars["GROVE_NOVA_HOSTS"], ",")
	n.CloudsYAML = n.vars["GROVE_NOVA_CLOUDS_YAML"]
	if n.Endpoint == "" || n.Token == "" {
		n.Stop()
		return nil, fmt.Errorf("the Nova harness printed no OS_ENDPOINT or OS_TOKEN: %v", n.vars)
	}
	return n, nil
}

// WriteHarness writes the harness script and its paste config into dir
// and returns the script's path, to run with Python.
func WriteHarness(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	for _, name := range []string{"nova_harness.py", "api-paste.ini", "neutron_harness.py"} {
		b, err := harnessFiles.ReadFile(name)
		if err != nil {
			return "", err
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return "", err
		}
	}
	return filepath.Join(dir, "nova_harness.py"), nil
}

// Stop ends the harness and waits for it to exit: SIGTERM, then SIGKILL
// after 10 seconds.
func (n *Nova) Stop() {
	defer n.Neutron.stop()
	n.proc.Stop()
}

// startNeutron runs neutron_harness.py with its files in dir and returns
// once Neutron serves.
func startNeutron(ctx context.Context, dir, script string) (*Neutron, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	p, err := pyharness.Start(ctx, "Neutron", dir, []string{script, "--state-dir", dir, "--die-with-parent"}, "GROVE_NEUTRON_READY", "neutron.log")
	if err != nil {
		return nil, err
	}
	nt := &Neutron{proc: p}
	v := p.Vars
	nt.Endpoint = v["GROVE_NEUTRON_ENDPOINT"]
	nt.Network, nt.NetworkID = v["GROVE_NEUTRON_NETWORK"], v["GROVE_NEUTRON_NETWORK_ID"]
	nt.Subnet, nt.SubnetID, nt.Subnet2 = v["GROVE_NEUTRON_SUBNET"], v["GROVE_NEUTRON_SUBNET_ID"], v["GROVE_NEUTRON_SUBNET2"]
	nt.ExternalNetwork, nt.ExternalNetworkID = v["GROVE_NEUTRON_EXTERNAL_NETWORK"], v["GROVE_NEUTRON_EXTERNAL_NETWORK_ID"]
	nt.SecurityGroup, nt.SecurityGroupID = v["GROVE_NEUTRON_SECURITY_GROUP"], v["GROVE_NEUTRON_SECURITY_GROUP_ID"]
	if nt.Endpoint == "" {
		nt.stop()
		return nil, fmt.Errorf("the Neutron harness printed no GROVE_NEUTRON_ENDPOINT: %v", v)
	}
	return nt, nil
}

// stop ends the Neutron harness (nothing when nt is nil): SIGTERM, then
// SIGKILL after 10 seconds.
func (nt *Neutron) stop() {
	if nt != nil {
		nt.proc.Stop()
	}
}

// Client is a gophercloud networking v2 client for this Neutron.
func (nt *Neutron) Client() *gophercloud.ServiceClient {
	p := &gophercloud.ProviderClient{}
	p.SetToken(Token)
	return &gophercloud.ServiceClient{ProviderClient: p, Endpoint: nt.Endpoint, ResourceBase: nt.Endpoint + "v2.0/", Type: "network"}
}

// Pid is the harness process's id.
func (n *Nova) Pid() int { return n.proc.Pid() }

// Env is what an agent needs to reach this Nova, KEY=VALUE, as
// scripts/nova.sh prints it: OS_AUTH_TYPE=admin_token, OS_TOKEN,
// OS_ENDPOINT (the compute endpoint), OS_PROJECT_ID, and the GROVE_NOVA_*
// variables tests use.
func (n *Nova) Env() []string {
	keys := []string{"OS_AUTH_TYPE", "OS_TOKEN", "OS_ENDPOINT", "OS_PROJECT_ID",
		"GROVE_NOVA_CLOUDS_YAML", "GROVE_NOVA_IMAGE_ENDPOINT", "GROVE_NOVA_IMAGE_ID", "GROVE_NOVA_IMAGE_NAME",
		"GROVE_NOVA_IMAGE2_ID", "GROVE_NOVA_IMAGE2_NAME", "GROVE_NOVA_FLAVORS", "GROVE_NOVA_HOSTS"}
	env := make([]string, 0, len(keys)+1)
	for _, k := range keys {
		env = append(env, k+"="+n.vars[k])
	}
	if n.Neutron != nil {
		env = append(env, "GROVE_NOVA_NETWORK_ENDPOINT="+n.Neutron.Endpoint)
	}
	return env
}

// Compute is a gophercloud compute client for this Nova at the given
// microversion ("" for 2.1). The client's Type must be "compute" for
// gophercloud to send the microversion header.
func (n *Nova) Compute(microversion string) *gophercloud.ServiceClient {
	p := &gophercloud.ProviderClient{}
	p.SetToken(n.Token)
	return &gophercloud.ServiceClient{ProviderClient: p, Endpoint: n.Endpoint, Type: "compute", Microversion: microversion}
}

// Image is a gophercloud image v2 client for the harness's image API.
func (n *Nova) Image() *gophercloud.ServiceClient {
	p := &gophercloud.ProviderClient{}
	p.SetToken(n.Token)
	return &gophercloud.ServiceClient{ProviderClient: p, Endpoint: n.ImageEndpoint, ResourceBase: n.ImageEndpoint + "v2/", Type: "image"}
}

// Need skips the test when the harness cannot run here, saying which
// packages to install; under CI (CI set, as CI=true) it fails instead,
// since CI installs them (.ci/run).
func Need(t testing.TB) {
	t.Helper()
	need(t, Available())
}

// NeedNeutron is Need for the harness with a real Neutron.
func NeedNeutron(t testing.TB) {
	t.Helper()
	need(t, AvailableNeutron())
}

func need(t testing.TB, missing error) {
	t.Helper()
	pyharness.Need(t, missing)
}

// sharedHarness is one harness of the test binary, started on first use.
type sharedHarness struct {
	once sync.Once
	nova *Nova
	err  error
}

func (s *sharedHarness) get(t testing.TB, opts Options) *Nova {
	t.Helper()
	s.once.Do(func() {
		dir, err := os.MkdirTemp("", "grove-novatest-")
		if err != nil {
			s.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		opts.RemoveDir = true
		s.nova, s.err = Start(ctx, dir, opts)
		if s.err != nil {
			_ = os.RemoveAll(dir)
		}
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	return s.nova
}

// shared and sharedNeutron are the test binary's harnesses: Nova takes
// seconds to start, and tests that create their own servers can share one.
var shared, sharedNeutron sharedHarness

// Shared returns a harness shared by every test of the test binary,
// started on first use (after Need). It is never stopped: it exits, and
// removes its directory, when the test binary is gone. Tests must only
// touch servers, groups and the like that they created.
func Shared(t testing.TB) *Nova {
	t.Helper()
	Need(t)
	return shared.get(t, Options{})
}

// SharedNeutron is Shared for a Nova that uses a real Neutron (a harness
// of its own, started on first use after NeedNeutron).
func SharedNeutron(t testing.TB) *Nova {
	t.Helper()
	NeedNeutron(t)
	return sharedNeutron.get(t, Options{Neutron: true})
}

// WaitServer polls a server until its status is one of statuses and
// returns it, or until ctx ends (the error then names the last status).
func WaitServer(ctx context.Context, c *gophercloud.ServiceClient, id string, statuses ...string) (*servers.Server, error) {
	last := "unknown"
	for {
		s, err := servers.Get(ctx, c, id).Extract()
		switch {
		case err == nil:
			last = s.Status
			if slices.Contains(statuses, s.Status) {
				return s, nil
			}
		case ctx.Err() == nil && !gophercloud.ResponseCodeIs(err, 404):
			return nil, fmt.Errorf("get server %s: %w", id, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("server %s is %s, not %s: %w", id, last, strings.Join(statuses, " or "), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
