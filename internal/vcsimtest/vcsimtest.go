// Package vcsimtest runs govmomi's vSphere simulator (vcsim) with the
// inventory Grove's vSphere tests use: one datacenter, 2 clusters of 3
// ESXi hosts, one host whose name contains "drs", and a template VM with a
// snapshot to clone from. Driver tests run it in process (New); end-to-end
// tests and scripts/vcsim.sh run it as a process, grove-vcsim.
//
// vcsim stores DRS rules and groups but never enforces them, so tests check
// what Grove asked vSphere for, not where VMs ended up.
package vcsimtest

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"testing"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/find"
	"github.com/vmware/govmomi/object"
	"github.com/vmware/govmomi/simulator"
	"github.com/vmware/govmomi/vim25/types"
)

// The inventory's names.
const (
	Datacenter = "DC0"
	Cluster    = "DC0_C0"
	Cluster2   = "DC0_C1"
	// DRSHost is the renamed first host of Cluster.
	DRSHost   = "drs-esx-0"
	Datastore = "LocalDS_0"
	Network   = "DC0_DVPG0"
	// Template is the template VM nodes are cloned from, with snapshot
	// Snapshot for linked clones.
	Template = "grove-template"
	Snapshot = "base"
	// FaultyTemplate is a template whose every clone fails with
	// FaultMessage, through the simulator's fault injection.
	FaultyTemplate = "grove-template-faulty"
	FaultMessage   = "insufficient resources to clone (injected by grove-vcsim)"
	Username       = "grove"
	Password       = "grove-pass"
)

// Sim is a running simulator.
type Sim struct {
	Model  *simulator.Model
	Server *simulator.Server
	// URL is the SDK URL without credentials.
	URL *url.URL
}

// Start builds the model and serves it on addr (127.0.0.1:0 when empty)
// over TLS with a self-signed certificate.
func Start(addr string) (*Sim, error) {
	if addr == "" {
		addr = "127.0.0.1:0"
	}
	m := simulator.VPX()
	m.Datacenter = 1
	m.Cluster = 2
	m.ClusterHost = 3
	m.Host = 0 // no standalone host: nodes go to clusters
	m.Machine = 1
	if err := m.Create(); err != nil {
		return nil, fmt.Errorf("vcsim model: %w", err)
	}
	// HostSystem has no Rename_Task in vcsim; rename in the registry
	// before serving.
	ctx := m.Service.Context
	for _, e := range m.Map().All("HostSystem") {
		h := e.(*simulator.HostSystem)
		if h.Name == Cluster+"_H0" {
			m.Map().Update(ctx, h, []types.PropertyChange{{Name: "name", Val: DRSHost}})
		}
	}
	m.Service.Listen = &url.URL{Host: addr}
	m.Service.TLS = new(tls.Config)
	s := m.Service.NewServer()
	sim := &Sim{Model: m, Server: s}
	u := *s.URL
	u.User = nil
	sim.URL = &u
	if err := sim.templates(); err != nil {
		sim.Close()
		return nil, err
	}
	m.Service.AddFaultRule(&simulator.FaultInjectionRule{
		MethodName: "CloneVM_Task", ObjectType: "VirtualMachine", ObjectName: FaultyTemplate,
		Probability: 1, FaultType: simulator.FaultTypeCustom, Enabled: true,
		Fault: &types.InsufficientResourcesFault{VimFault: types.VimFault{MethodFault: types.MethodFault{
			FaultCause: &types.LocalizedMethodFault{LocalizedMessage: FaultMessage}}}},
		Message: FaultMessage,
	})
	return sim, nil
}

// templates turns a VM of each cluster into a template with a snapshot.
func (s *Sim) templates() error {
	ctx := context.Background()
	c, err := govmomi.NewClient(ctx, s.UserURL(), true)
	if err != nil {
		return err
	}
	defer c.Logout(ctx)
	f := find.NewFinder(c.Client, true)
	dc, err := f.Datacenter(ctx, Datacenter)
	if err != nil {
		return err
	}
	f.SetDatacenter(dc)
	for src, name := range map[string]string{Cluster + "_RP0_VM0": Template, Cluster2 + "_RP0_VM0": FaultyTemplate} {
		vm, err := f.VirtualMachine(ctx, src)
		if err != nil {
			return err
		}
		steps := []func() error{
			func() error { t, err := vm.PowerOff(ctx); return wait(ctx, t, err) },
			func() error { t, err := vm.CreateSnapshot(ctx, Snapshot, "", false, false); return wait(ctx, t, err) },
			func() error { t, err := vm.Rename(ctx, name); return wait(ctx, t, err) },
			func() error { return vm.MarkAsTemplate(ctx) },
		}
		for _, step := range steps {
			if err := step(); err != nil {
				return fmt.Errorf("make template %s of %s: %w", name, src, err)
			}
		}
	}
	return nil
}

func wait(ctx context.Context, t *object.Task, err error) error {
	if err != nil {
		return err
	}
	_, err = t.WaitForResult(ctx)
	return err
}

// UserURL is the SDK URL with the credentials.
func (s *Sim) UserURL() *url.URL {
	u := *s.URL
	u.User = url.UserPassword(Username, Password)
	return &u
}

// Env is what an agent needs to reach the simulator, as KEY=VALUE.
func (s *Sim) Env() []string {
	return []string{
		"GOVC_URL=" + s.URL.String(),
		"GOVC_USERNAME=" + Username,
		"GOVC_PASSWORD=" + Password,
		"GOVC_INSECURE=1",
		"GOVC_DATACENTER=" + Datacenter,
	}
}

// Close stops the server and removes the model.
func (s *Sim) Close() {
	s.Server.Close()
	s.Model.Remove()
}

// Service is the simulator's service, for fault injection.
func (s *Sim) Service() *simulator.Service { return s.Model.Service }

// New starts a simulator in process for the duration of a test.
func New(t testing.TB) *Sim {
	t.Helper()
	s, err := Start("")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}
