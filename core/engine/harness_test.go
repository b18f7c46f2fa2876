package engine_test

import (
	"context"
	"fmt"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/sqlite"
	"github.com/grovehq/grove/plugins/host"
	pb "github.com/grovehq/grove/plugins/proto"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// The harness runs an engine in the test process on a real SQLite store, with
// a plugin served in process over go-plugin's gRPC test connection: the same
// client, server and wire as a plugin process, without starting one. Its
// plugin's profile type test.gate and policy type test.hold do nothing unless
// a test closes a gate on a call; then the call waits until its context ends,
// which is how a test holds an action in the middle of its work.

var caller = engine.Caller{User: "tester", Project: "test"}

// gate holds the plugin calls a test closed until their context ends.
type gate struct {
	mu      sync.Mutex
	closed  map[string]bool
	entered chan string   // a call that reached a closed gate
	release chan struct{} // closed at the end of the test
}

func newGate() *gate {
	return &gate{closed: map[string]bool{}, entered: make(chan string, 64), release: make(chan struct{})}
}

func (g *gate) close(call string) {
	g.mu.Lock()
	g.closed[call] = true
	g.mu.Unlock()
}

// pass returns ctx's error if the call's gate is closed, once ctx ends.
func (g *gate) pass(ctx context.Context, call string) error {
	g.mu.Lock()
	closed := g.closed[call]
	g.mu.Unlock()
	if !closed {
		return nil
	}
	select {
	case g.entered <- call:
	default:
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-g.release:
		return fmt.Errorf("the test ended")
	}
}

type gateDriver struct{ g *gate }

func (d gateDriver) each(ctx context.Context, call string, nodes []sdk.Node) []sdk.Result {
	err := d.g.pass(ctx, call)
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		out[i] = sdk.Result{ID: n.ID, PhysicalID: "gate-" + n.ID, Healthy: true, Err: err}
	}
	return out
}

func (d gateDriver) Create(ctx context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return d.each(ctx, "create", nodes)
}

func (d gateDriver) Delete(ctx context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return d.each(ctx, "delete", nodes)
}

func (d gateDriver) Check(ctx context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return d.each(ctx, "check", nodes)
}

func (d gateDriver) Update(ctx context.Context, _, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return d.each(ctx, "update", nodes)
}

func (d gateDriver) Recover(ctx context.Context, _ sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	return d.each(ctx, "recover", nodes)
}

type holdPolicy struct{ g *gate }

func (holdPolicy) Attach(context.Context, sdk.Spec, sdk.Cluster) (map[string]any, error) {
	return map[string]any{}, nil
}

func (holdPolicy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error { return nil }

func (p holdPolicy) Check(ctx context.Context, _ sdk.CheckRequest) (sdk.CheckResult, error) {
	return sdk.CheckResult{}, p.g.pass(ctx, "policy")
}

func testPlugin(g *gate) *sdk.Plugin {
	var targets []sdk.Target
	for _, a := range []string{model.ClusterAddNodesAction, model.ClusterReplaceNodesAction} {
		targets = append(targets, sdk.Target{Phase: engine.PhaseBefore, Action: a})
	}
	return &sdk.Plugin{
		Name: "test", Version: "1.0",
		Profiles: []sdk.ProfileType{{Type: "test.gate", Versions: []string{"1.0"}, Description: "Nodes whose calls a test can hold.",
			Schema: schema.Schema{"label": {Type: schema.String, Updatable: true, Default: ""}}, Operations: []string{"RECREATE"}, Driver: gateDriver{g}}},
		Policies: []sdk.PolicyType{{Type: "test.hold", Versions: []string{"1.0"}, Description: "A policy whose checks a test can hold.",
			Schema: schema.Schema{}, Targets: targets, Policy: holdPolicy{g}}},
	}
}

// inProcess serves one plugin to the engine.
type inProcess struct {
	client *sdk.Client
	comps  []*host.Component
}

func (p *inProcess) Client(_ context.Context, kind, typ string) (*sdk.Client, *host.Component, error) {
	c, ok := p.Component(kind, typ)
	if !ok {
		return nil, nil, fmt.Errorf("no plugin provides the %s type %q", kind, typ)
	}
	return p.client, c, nil
}

func (p *inProcess) Component(kind, typ string) (*host.Component, bool) {
	for _, c := range p.comps {
		if c.Kind == kind && c.Type == typ {
			return c, true
		}
	}
	return nil, false
}

func (p *inProcess) Components(kind string) []*host.Component {
	var out []*host.Component
	for _, c := range p.comps {
		if c.Kind == kind {
			out = append(out, c)
		}
	}
	return out
}

func (p *inProcess) Health(string, string) error { return nil }

func (p *inProcess) Call(ctx context.Context, kind, typ string, fn func(ctx context.Context, c *sdk.Client) error) error {
	if _, ok := p.Component(kind, typ); !ok {
		return fmt.Errorf("no plugin provides the %s type %q", kind, typ)
	}
	return fn(ctx, p.client)
}

func serve(t *testing.T, plugin *sdk.Plugin) *inProcess {
	t.Helper()
	gc, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{sdk.PluginName: &sdk.GRPCPlugin{Impl: plugin}})
	t.Cleanup(func() { gc.Close() })
	raw, err := gc.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatalf("dispense the test plugin: %v", err)
	}
	client := raw.(*sdk.Client)
	if _, err := client.Info.Configure(context.Background(), &pb.ConfigureRequest{ProfileApiVersions: sdk.ProfileAPIVersions(),
		PolicyApiVersions: sdk.PolicyAPIVersions(), DataDir: t.TempDir()}); err != nil {
		t.Fatalf("configure the test plugin: %v", err)
	}
	dj, err := sdk.DescriptionToJSON(plugin.Describe())
	if err != nil {
		t.Fatal(err)
	}
	p := &inProcess{client: client}
	for _, c := range dj.Components {
		p.comps = append(p.comps, &host.Component{Kind: c.Kind, Type: c.Type, Versions: c.Versions, Description: c.Description, Schema: c.Schema,
			Targets: c.Targets, DefaultPriority: c.DefaultPriority, Singleton: c.Singleton, Operations: c.Operations, Plugin: plugin.Name})
	}
	return p
}

type harness struct {
	t     *testing.T
	eng   *engine.Engine
	store *store.SQL
	gate  *gate
}

// newHarness starts an engine on a fresh SQLite store. wrap, when set,
// stands between the engine and the store.
func newHarness(t *testing.T, wrap func(store.Store) store.Store) *harness {
	t.Helper()
	h := newIdleHarness(t, wrap)
	if err := h.eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(h.eng.Stop)
	return h
}

// newIdleHarness is newHarness with an engine that takes requests but runs
// no action: what it accepts stays READY.
func newIdleHarness(t *testing.T, wrap func(store.Store) store.Store) *harness {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	g := newGate()
	t.Cleanup(func() { close(g.release) })
	plugins := serve(t, testPlugin(g))
	var es store.Store = s
	if wrap != nil {
		es = wrap(s)
	}
	eng := engine.New(es, plugins, hclog.NewNullLogger(), engine.Config{CheckInterval: -1, Poll: 50 * time.Millisecond})
	return &harness{t: t, eng: eng, store: s, gate: g}
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

func (h *harness) profile(name string) {
	h.t.Helper()
	spec := map[string]any{"type": "test.gate", "version": "1.0", "properties": map[string]any{"label": name}}
	if _, err := h.eng.CreateProfile(h.ctx(), caller, name, spec, nil); err != nil {
		h.t.Fatalf("create profile %s: %v", name, err)
	}
}

// wait waits for an action to end and returns it.
func (h *harness) wait(a *model.Action, err error) *model.Action {
	h.t.Helper()
	if err != nil {
		h.t.Fatalf("submit: %v", err)
	}
	end, err := h.eng.Wait(h.ctx(), a.ID)
	if err != nil {
		h.t.Fatalf("action %s did not end: %v", a.Action, err)
	}
	return end
}

// ok waits for an action and fails the test unless it succeeded.
func (h *harness) ok(a *model.Action, err error) {
	h.t.Helper()
	if end := h.wait(a, err); end.Status != model.ActionSucceeded {
		h.t.Fatalf("%s: %s %s", end.Action, end.Status, end.StatusReason)
	}
}

func (h *harness) cluster(name string, desired, timeout int) *model.Cluster {
	h.t.Helper()
	cl, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: name, Profile: "p", DesiredCapacity: &desired, Timeout: &timeout})
	h.ok(a, err)
	return cl
}

func (h *harness) orphan(name string) *model.Node {
	h.t.Helper()
	n, a, err := h.eng.CreateNode(h.ctx(), caller, engine.NodeCreate{Name: name, Profile: "p"})
	h.ok(a, err)
	return n
}

func (h *harness) nodes(clusterID string) []*model.Node {
	h.t.Helper()
	ns, err := h.store.ClusterNodes(h.ctx(), clusterID)
	if err != nil {
		h.t.Fatal(err)
	}
	return ns
}

func (h *harness) getCluster(id string) *model.Cluster {
	h.t.Helper()
	cl, err := h.store.GetCluster(h.ctx(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return cl
}

// entered waits until a call reached a closed gate.
func (h *harness) entered(call string) {
	h.t.Helper()
	select {
	case got := <-h.gate.entered:
		if got != call {
			h.t.Fatalf("the %s call reached a closed gate, want %s", got, call)
		}
	case <-time.After(20 * time.Second):
		h.t.Fatalf("no %s call reached its closed gate within 20s", call)
	}
}
