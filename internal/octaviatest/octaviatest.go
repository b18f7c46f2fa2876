// Package octaviatest runs a real OpenStack Octavia for Grove's tests:
// Debian bookworm's Octavia 11.0.0 (Antelope) stood up in one Python process
// (octavia_harness.py, run with /usr/bin/python3). The harness serves the v2
// API's own pecan application with noauth on a loopback port, keeps its
// state in a SQLite file recreated at each start, and runs the controller
// worker in process (fake:// messaging, taskflow's serial engine), so the
// amphora provider on Octavia's no-op drivers really moves load balancers,
// listeners, pools, health monitors and members from PENDING_* to ACTIVE.
//
// What is not real: no amphora or HAProxy runs, every VIP is 198.51.100.1,
// any subnet id is accepted, and operating_status stays OFFLINE (there is
// no health manager).
//
// A bug of Octavia 11.0.0 itself shows: with the jobboard off (its default)
// ControllerWorker.run_flow builds the flow as func(*args) and drops the
// listeners argument, so a single-call create (listeners, pools, monitors
// and members inline in the load balancer create) takes the load balancer
// to ACTIVE and leaves every child PENDING_CREATE until that child is
// itself updated (Octavia locks on the load balancer's status, not the
// child's). Create children one at a time, waiting for ACTIVE between changes, as
// Senlin's policy does.
//
// scripts/octavia.sh runs the same harness in the background for
// development.
package octaviatest

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
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"

	"github.com/grovehq/grove/internal/pyharness"
)

//go:embed octavia_harness.py
var harnessFiles embed.FS

// Python is the interpreter the harness runs under (pyharness.Python).
const Python = pyharness.Python

// Packages are the Debian packages the harness needs.
const Packages = "python3-octavia python3-oslotest python3-wsgi-intercept python3-requests-mock python3-ddt"

// Octavia is a running harness.
type Octavia struct {
	// Endpoint is the API's root, http://127.0.0.1:PORT/: gophercloud's
	// Endpoint, with ResourceBase Endpoint + "v2/".
	Endpoint string
	// ProjectID is the project requests act in, sent as X-Project-Id.
	// Octavia refuses a create without one ("Missing project ID").
	ProjectID string
	// Token is a Nova noauth2 token, USER:PROJECT: the harness takes the
	// project from it when a request has no X-Project-Id, as
	// keystonemiddleware does in a real cloud.
	Token string
	// SubnetID is a subnet for VIPs and members; the no-op network driver
	// accepts any id.
	SubnetID string
	// VIPAddress is the address every load balancer's VIP gets.
	VIPAddress string
	// CloudsYAML is a clouds.yaml with this Octavia as "grove-octavia"
	// (and, when started with a Nova's clouds.yaml, "grove-openstack").
	CloudsYAML string
	// Dir holds the harness's files: its logs (octavia.log, access.log,
	// harness.log), octavia.conf, the database, env and clouds.yaml.
	Dir string

	proc *pyharness.Proc
	vars map[string]string
}

// Available says why the harness cannot run here, or nil when it can.
func Available() error { return pyharness.Available("Octavia", Packages) }

// Options tune StartWith.
type Options struct {
	// Listen is HOST:PORT to serve on; 127.0.0.1:0 when empty.
	Listen string
	// NovaCloudsYAML is the local Nova's clouds.yaml (novatest's
	// CloudsYAML): its grove-nova cloud is written to CloudsYAML as
	// grove-openstack, with this Octavia as load_balancer_endpoint_override.
	NovaCloudsYAML string
	// RemoveDir removes dir when the harness exits.
	RemoveDir bool
}

// Start runs the harness with its files in dir and returns once Octavia
// serves. The harness exits when Stop is called or when this process is
// gone. It takes about 3 seconds on an idle machine, longer on a busy one;
// ctx bounds the wait.
func Start(ctx context.Context, dir string) (*Octavia, error) {
	return StartWith(ctx, dir, Options{})
}

// StartWith is Start with options.
func StartWith(ctx context.Context, dir string, opts Options) (*Octavia, error) {
	if err := Available(); err != nil {
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
	listen := opts.Listen
	if listen == "" {
		listen = "127.0.0.1:0"
	}
	args := []string{script, "--state-dir", dir, "--listen", listen, "--die-with-parent"}
	if opts.NovaCloudsYAML != "" {
		args = append(args, "--nova-clouds-yaml", opts.NovaCloudsYAML)
	}
	if opts.RemoveDir {
		args = append(args, "--remove-state-on-exit")
	}
	p, err := pyharness.Start(ctx, "Octavia", dir, args, "GROVE_OCTAVIA_READY", "octavia.log")
	if err != nil {
		return nil, err
	}
	o := &Octavia{Dir: dir, proc: p, vars: p.Vars}
	o.Endpoint = o.vars["GROVE_OCTAVIA_ENDPOINT"]
	o.ProjectID = o.vars["GROVE_OCTAVIA_PROJECT_ID"]
	o.Token = o.vars["GROVE_OCTAVIA_TOKEN"]
	o.SubnetID = o.vars["GROVE_OCTAVIA_SUBNET_ID"]
	o.VIPAddress = o.vars["GROVE_OCTAVIA_VIP_ADDRESS"]
	o.CloudsYAML = o.vars["GROVE_OCTAVIA_CLOUDS_YAML"]
	if o.Endpoint == "" || o.ProjectID == "" || o.SubnetID == "" {
		o.Stop()
		return nil, fmt.Errorf("the Octavia harness printed no GROVE_OCTAVIA_ENDPOINT, GROVE_OCTAVIA_PROJECT_ID or GROVE_OCTAVIA_SUBNET_ID: %v", o.vars)
	}
	return o, nil
}

// WriteHarness writes the harness script into dir and returns its path,
// to run with Python.
func WriteHarness(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b, err := harnessFiles.ReadFile("octavia_harness.py")
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "octavia_harness.py")
	if err := os.WriteFile(path, b, 0o644); err != nil {
		return "", err
	}
	return path, nil
}

// Stop ends the harness and waits for it to exit: SIGTERM, then SIGKILL
// after 10 seconds.
func (o *Octavia) Stop() { o.proc.Stop() }

// Pid is the harness process's id.
func (o *Octavia) Pid() int { return o.proc.Pid() }

// Env is what a client needs to reach this Octavia, KEY=VALUE, as
// scripts/octavia.sh prints it: GROVE_OCTAVIA_ENDPOINT, _PROJECT_ID,
// _TOKEN, _SUBNET_ID, _VIP_ADDRESS and _CLOUDS_YAML.
func (o *Octavia) Env() []string {
	keys := []string{"GROVE_OCTAVIA_ENDPOINT", "GROVE_OCTAVIA_PROJECT_ID", "GROVE_OCTAVIA_TOKEN",
		"GROVE_OCTAVIA_SUBNET_ID", "GROVE_OCTAVIA_VIP_ADDRESS", "GROVE_OCTAVIA_CLOUDS_YAML"}
	env := make([]string, 0, len(keys))
	for _, k := range keys {
		env = append(env, k+"="+o.vars[k])
	}
	return env
}

// LoadBalancer is a gophercloud load-balancer v2 client for this Octavia:
// the endpoint and ResourceBase openstack.NewLoadBalancerV2 would take
// from a catalog, and the project as X-Project-Id.
func (o *Octavia) LoadBalancer() *gophercloud.ServiceClient {
	p := &gophercloud.ProviderClient{}
	return &gophercloud.ServiceClient{
		ProviderClient: p, Endpoint: o.Endpoint, ResourceBase: o.Endpoint + "v2/", Type: "load-balancer",
		MoreHeaders: map[string]string{"X-Project-Id": o.ProjectID},
	}
}

// Need skips the test when the harness cannot run here, saying which
// packages to install; under CI (CI set, as CI=true) it fails instead,
// since CI installs them (.ci/run).
func Need(t testing.TB) {
	t.Helper()
	pyharness.Need(t, Available())
}

// shared is the test binary's one harness: tests that create their own
// load balancers can share it.
var shared struct {
	once    sync.Once
	octavia *Octavia
	err     error
}

// Shared returns a harness shared by every test of the test binary,
// started on first use (after Need). It is never stopped: it exits, and
// removes its directory, when the test binary is gone. Tests must only
// touch load balancers they created.
func Shared(t testing.TB) *Octavia {
	t.Helper()
	Need(t)
	shared.once.Do(func() {
		dir, err := os.MkdirTemp("", "grove-octaviatest-")
		if err != nil {
			shared.err = err
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		shared.octavia, shared.err = StartWith(ctx, dir, Options{RemoveDir: true})
		if shared.err != nil {
			_ = os.RemoveAll(dir)
		}
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.octavia
}

// WaitLoadBalancer polls a load balancer until its provisioning status is
// one of statuses and returns it, or until ctx ends (the error then names
// the last status). "DELETED" among statuses waits for a 404, and then
// returns nil and no error. Children are immutable, and Octavia answers
// 409, while their load balancer is PENDING_*: wait for ACTIVE between
// changes.
func WaitLoadBalancer(ctx context.Context, c *gophercloud.ServiceClient, id string, statuses ...string) (*loadbalancers.LoadBalancer, error) {
	last := "unknown"
	for {
		lb, err := loadbalancers.Get(ctx, c, id).Extract()
		switch {
		case err == nil:
			last = lb.ProvisioningStatus
			if slices.Contains(statuses, lb.ProvisioningStatus) {
				return lb, nil
			}
		case gophercloud.ResponseCodeIs(err, 404) && slices.Contains(statuses, "DELETED"):
			return nil, nil
		case ctx.Err() == nil:
			return nil, fmt.Errorf("get load balancer %s: %w", id, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("load balancer %s is %s, not %s: %w", id, last, strings.Join(statuses, " or "), ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}
