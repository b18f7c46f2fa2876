package engine_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/sqlite"
	"github.com/grovehq/grove/plugins/builtin"
	"github.com/grovehq/grove/plugins/builtin/process"
	"github.com/grovehq/grove/plugins/host"
	"github.com/grovehq/grove/plugins/sdk"
	pb "github.com/grovehq/grove/plugins/sdk/proto"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// The harness runs an engine in the test process on a real SQLite store,
// with plugins served in process over go-plugin's gRPC test connection: the
// same client, server and wire as a plugin process, without starting one.
// Two plugins are served: the built-in one, built as `grove plugin serve`
// builds it (grove.noop, senlin.policy.deletion, senlin.policy.scaling...),
// and a test plugin. The test plugin's profile type test.gate and policy
// type test.hold do nothing unless a test closes a gate on a call; then the
// call waits until its context ends, which is how a test holds an action in
// the middle of its work. Its policy type test.refuse refuses every action
// it checks with the reason in its spec.
//
// The engine's clock is the harness's: it stands still unless a test
// advances it, so leases expire and cooldowns end when the test says.

var caller = engine.Caller{User: "tester", Project: "test"}

// clock is a clock that moves only when told.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// gate holds the plugin calls a test closed until their context ends, and
// records what the test plugin's driver did.
type gate struct {
	mu      sync.Mutex
	closed  map[string]bool
	passes  map[string]int // calls let through before the gate closes
	entered chan string    // a call that reached a closed gate
	release chan struct{}  // closed at the end of the test

	done map[string]map[string]int // successful driver calls per node: call -> node id -> count
	live map[string]bool           // nodes the driver created and has not deleted
	// checkData is the data Check returns per node id, when set.
	checkData map[string]map[string]any
	// checkSizes are the node counts of the Check calls made, in order.
	checkSizes []int
	// checked are the nodes the last Check calls were given, by id.
	checked map[string]sdk.Node
}

func newGate() *gate {
	return &gate{closed: map[string]bool{}, passes: map[string]int{}, entered: make(chan string, 64), release: make(chan struct{}),
		done: map[string]map[string]int{}, live: map[string]bool{}}
}

func (g *gate) close(call string) { g.closeAfter(call, 0) }

// closeAfter lets n calls through, then holds the next ones.
func (g *gate) closeAfter(call string, n int) {
	g.mu.Lock()
	g.closed[call], g.passes[call] = true, n
	g.mu.Unlock()
}

func (g *gate) open(call string) {
	g.mu.Lock()
	delete(g.closed, call)
	g.mu.Unlock()
}

// pass returns ctx's error if the call's gate is closed, once ctx ends.
func (g *gate) pass(ctx context.Context, call string) error {
	g.mu.Lock()
	closed := g.closed[call] && g.passes[call] == 0
	if g.closed[call] && !closed {
		g.passes[call]--
	}
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

func (g *gate) record(call string, ids []string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.done[call] == nil {
		g.done[call] = map[string]int{}
	}
	for _, id := range ids {
		g.done[call][id]++
		switch call {
		case "create":
			g.live[id] = true
		case "delete":
			delete(g.live, id)
		}
	}
}

// calls returns how often each node had a successful call.
func (g *gate) calls(call string) map[string]int {
	g.mu.Lock()
	defer g.mu.Unlock()
	out := map[string]int{}
	for id, n := range g.done[call] {
		out[id] = n
	}
	return out
}

// liveNodes returns the nodes the driver holds, sorted.
func (g *gate) liveNodes() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []string
	for id := range g.live {
		out = append(out, id)
	}
	slices.Sort(out)
	return out
}

type gateDriver struct{ g *gate }

func (d gateDriver) each(ctx context.Context, call string, nodes []sdk.Node) []sdk.Result {
	err := d.g.pass(ctx, call)
	out := make([]sdk.Result, len(nodes))
	ids := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = sdk.Result{ID: n.ID, PhysicalID: "gate-" + n.ID, Healthy: true, Err: err}
		ids[i] = n.ID
	}
	if err == nil {
		d.g.record(call, ids)
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
	d.g.mu.Lock()
	d.g.checkSizes = append(d.g.checkSizes, len(nodes))
	if d.g.checked == nil {
		d.g.checked = map[string]sdk.Node{}
	}
	for _, n := range nodes {
		d.g.checked[n.ID] = n
	}
	d.g.mu.Unlock()
	out := d.each(ctx, "check", nodes)
	d.g.mu.Lock()
	defer d.g.mu.Unlock()
	for i := range out {
		out[i].Data = d.g.checkData[out[i].ID]
	}
	return out
}

// setCheckData makes Check return data for a node.
func (g *gate) setCheckData(id string, data map[string]any) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.checkData == nil {
		g.checkData = map[string]map[string]any{}
	}
	g.checkData[id] = data
}

func (d gateDriver) Update(ctx context.Context, _, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return d.each(ctx, "update", nodes)
}

func (d gateDriver) Recover(ctx context.Context, _ sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	return d.each(ctx, "recover", nodes)
}

// Operate runs the test.gate operations: "stop" leaves a node not running,
// the others running.
func (d gateDriver) Operate(ctx context.Context, _ sdk.Spec, nodes []sdk.Node, op string, _ map[string]any) []sdk.Result {
	out := d.each(ctx, "operate", nodes)
	for i := range out {
		out[i].Healthy = op != "stop"
	}
	return out
}

type holdPolicy struct{ g *gate }

func (p holdPolicy) Attach(ctx context.Context, _ sdk.Spec, _ sdk.Cluster) (map[string]any, error) {
	return map[string]any{}, p.g.pass(ctx, "attach")
}

func (holdPolicy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error { return nil }

func (p holdPolicy) Check(ctx context.Context, _ sdk.CheckRequest) (sdk.CheckResult, error) {
	return sdk.CheckResult{}, p.g.pass(ctx, "policy")
}

// refusePolicy refuses every action it checks.
type refusePolicy struct{}

func (refusePolicy) Attach(context.Context, sdk.Spec, sdk.Cluster) (map[string]any, error) {
	return map[string]any{}, nil
}

func (refusePolicy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error { return nil }

func (refusePolicy) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	reason, _ := req.Policy.Properties["reason"].(string)
	return sdk.CheckResult{Refuse: reason}, nil
}

// seenPolicy keeps the cluster's profile as attach saw it in the binding
// data, and refuses every check with Senlin's status data.
type seenPolicy struct{}

func (seenPolicy) Attach(_ context.Context, _ sdk.Spec, c sdk.Cluster) (map[string]any, error) {
	return map[string]any{"type": c.Profile.Type, "id": c.Profile.ID, "properties": c.Profile.Properties}, nil
}

func (seenPolicy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error { return nil }

func (seenPolicy) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	if req.Phase != engine.PhaseBefore {
		return sdk.CheckResult{}, nil
	}
	return sdk.CheckResult{Refuse: "Nothing seen suits.", Data: map[string]any{"status": "ERROR", "status_reason": "Nothing seen suits."}}, nil
}

// warnPolicy refuses a scale-in as Senlin's load-balancing policy does when
// a member cannot be removed: with the cluster's first node (by index) and
// an id of no node of the cluster named under sdk.DataNodeWarnings.
type warnPolicy struct{}

func (warnPolicy) Attach(context.Context, sdk.Spec, sdk.Cluster) (map[string]any, error) {
	return map[string]any{}, nil
}

func (warnPolicy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error { return nil }

func (warnPolicy) Check(_ context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	first := req.Cluster.Nodes[0]
	for _, n := range req.Cluster.Nodes {
		if n.Index < first.Index {
			first = n
		}
	}
	const reason = "Failed in removing node from lb pool."
	return sdk.CheckResult{Refuse: reason, Data: map[string]any{sdk.DataNodeWarnings: map[string]any{first.ID: reason, "no-such-node": reason}}}, nil
}

// refusedActions are the cluster actions test.refuse checks before they run.
var refusedActions = []string{model.ClusterResizeAction, model.ClusterScaleInAction, model.ClusterScaleOutAction, model.ClusterAddNodesAction,
	model.ClusterDelNodesAction, model.ClusterReplaceNodesAction, model.ClusterUpdateAction, model.ClusterRecoverAction}

func testPlugin(g *gate) *sdk.Plugin {
	var hold, refuse []sdk.Target
	for _, a := range []string{model.ClusterAddNodesAction, model.ClusterReplaceNodesAction} {
		hold = append(hold, sdk.Target{Phase: engine.PhaseBefore, Action: a})
	}
	for _, a := range refusedActions {
		refuse = append(refuse, sdk.Target{Phase: engine.PhaseBefore, Action: a})
	}
	return &sdk.Plugin{
		Name: "test", Version: "1.0",
		Profiles: []sdk.ProfileType{{Type: "test.gate", Versions: []string{"1.0"}, Description: "Nodes whose calls a test can hold.",
			Schema: schema.Schema{"label": {Type: schema.String, Updatable: true, Default: ""},
				"secret": {Type: schema.String, Sensitive: true, Description: "A sensitive value, for what policies see of it."}}, Operations: []string{"RECREATE"}, Driver: gateDriver{g},
			NodeOperations: []sdk.NodeOperation{
				{Name: "start", Description: "Start.", Parameters: schema.Schema{}},
				{Name: "stop", Description: "Stop.", Parameters: schema.Schema{
					"mode": {Type: schema.String, Default: "soft", Constraints: []schema.Constraint{schema.AllowedValues("soft", "hard")}}}},
			}}},
		Policies: []sdk.PolicyType{
			{Type: "test.hold", Versions: []string{"1.0"}, Description: "A policy whose checks a test can hold.",
				Schema: schema.Schema{}, Targets: hold, Policy: holdPolicy{g}},
			{Type: "test.refuse", Versions: []string{"1.0"}, Description: "A policy that refuses every action it checks.",
				Schema: schema.Schema{"reason": {Type: schema.String, Required: true}}, Targets: refuse, Policy: refusePolicy{}},
			{Type: "test.warn", Versions: []string{"1.0"}, Description: "A policy that refuses a scale-in and marks a node WARNING.",
				Schema: schema.Schema{}, Targets: []sdk.Target{{Phase: engine.PhaseBefore, Action: model.ClusterScaleInAction}}, Policy: warnPolicy{}},
			{Type: "test.seen", Versions: []string{"1.0"}, Description: "A policy that keeps the profile it saw at attach in its binding.",
				Schema: schema.Schema{}, Policy: seenPolicy{}},
		},
	}
}

// servedPlugin is one plugin served in process: its client and what it
// described.
type servedPlugin struct {
	client *sdk.Client
	comps  []*host.Component
}

// inProcess serves plugins to the engine, as the plugin host does.
type inProcess struct{ plugins []servedPlugin }

func (p *inProcess) find(kind, typ string) (*sdk.Client, *host.Component, bool) {
	for _, sp := range p.plugins {
		for _, c := range sp.comps {
			if c.Kind == kind && c.Type == typ {
				return sp.client, c, true
			}
		}
	}
	return nil, nil, false
}

func (p *inProcess) Client(_ context.Context, kind, typ string) (*sdk.Client, *host.Component, error) {
	client, c, ok := p.find(kind, typ)
	if !ok {
		return nil, nil, fmt.Errorf("no plugin provides the %s type %q", kind, typ)
	}
	return client, c, nil
}

func (p *inProcess) Component(kind, typ string) (*host.Component, bool) {
	_, c, ok := p.find(kind, typ)
	return c, ok
}

func (p *inProcess) Components(kind string) []*host.Component {
	var out []*host.Component
	for _, sp := range p.plugins {
		for _, c := range sp.comps {
			if c.Kind == kind {
				out = append(out, c)
			}
		}
	}
	return out
}

func (p *inProcess) Health(string, string) error { return nil }

func (p *inProcess) Call(ctx context.Context, kind, typ string, fn func(ctx context.Context, c *sdk.Client) error) error {
	client, _, ok := p.find(kind, typ)
	if !ok {
		return fmt.Errorf("no plugin provides the %s type %q", kind, typ)
	}
	return fn(ctx, client)
}

// serve serves plugins in process, each handshaken as the plugin host does
// it: described and configured over the wire.
func serve(t *testing.T, plugins ...*sdk.Plugin) *inProcess {
	t.Helper()
	out := &inProcess{}
	for _, plugin := range plugins {
		gc, _ := goplugin.TestPluginGRPCConn(t, false, map[string]goplugin.Plugin{sdk.PluginName: &sdk.GRPCPlugin{Impl: plugin}})
		t.Cleanup(func() { gc.Close() })
		raw, err := gc.Dispense(sdk.PluginName)
		if err != nil {
			t.Fatalf("dispense the plugin %s: %v", plugin.Name, err)
		}
		client := raw.(*sdk.Client)
		desc, err := client.Info.Describe(context.Background(), &pb.DescribeRequest{})
		if err != nil {
			t.Fatalf("describe the plugin %s: %v", plugin.Name, err)
		}
		agreed, err := client.Info.Configure(context.Background(), &pb.ConfigureRequest{ProfileApiVersions: sdk.ProfileAPIVersions(),
			PolicyApiVersions: sdk.PolicyAPIVersions(), DataDir: t.TempDir()})
		if err != nil {
			t.Fatalf("configure the plugin %s: %v", plugin.Name, err)
		}
		apiVersion := agreed.ProfileApiVersion
		dj, err := sdk.DescriptionToJSON(desc)
		if err != nil {
			t.Fatal(err)
		}
		sp := servedPlugin{client: client}
		for _, c := range dj.Components {
			sp.comps = append(sp.comps, &host.Component{Kind: c.Kind, Type: c.Type, Versions: c.Versions, Description: c.Description, Schema: c.Schema,
				Targets: c.Targets, DefaultPriority: c.DefaultPriority, Singleton: c.Singleton, WantsHosts: c.WantsHosts, Operations: c.Operations, NeedsPort: c.NeedsPort,
				Plugin: plugin.Name, NodeOperations: c.NodeOperations, APIVersion: apiVersion})
		}
		out.plugins = append(out.plugins, sp)
	}
	return out
}

type harness struct {
	t       *testing.T
	eng     *engine.Engine
	store   *store.SQL
	wrap    func(store.Store) store.Store
	crashes *crashStore // what the running engine's store calls go through
	plugins *inProcess
	clock   *clock
	gate    *gate
}

// builtinPlugin is the built-in plugin as `grove plugin serve` builds it,
// except that local.process keeps its nodes' runtime directories in the
// test's temporary directory instead of the machine's. Its event stream
// is dropped with the driver it belonged to: the harness runs no health
// checks, which are what follow it.
func builtinPlugin(t *testing.T) *sdk.Plugin {
	p := builtin.Plugin("test")
	for i := range p.Profiles {
		if p.Profiles[i].Type == process.TypeName {
			p.Profiles[i].Driver, p.Profiles[i].Watch = &process.Driver{Dir: t.TempDir()}, nil
		}
	}
	return p
}

// testSecretsKey is every harness engine's key for sensitive values, so an
// engine that replaces a crashed one opens what that one sealed.
var testSecretsKey = []byte("0123456789abcdef0123456789abcdef")

// epoch is where the harness's clock starts.
var epoch = time.Date(2030, 1, 1, 12, 0, 0, 0, time.UTC)

// newHarness starts an engine on a fresh SQLite store. wrap, when set,
// stands between the engine and the store.
func newHarness(t *testing.T, wrap func(store.Store) store.Store) *harness {
	t.Helper()
	h := newIdleHarness(t, wrap)
	if err := h.eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The engine running at the end, which a test may have replaced.
	t.Cleanup(func() { h.eng.Stop() })
	return h
}

// newIdleHarness is newHarness with an engine that takes requests but runs
// no action: what it accepts stays READY.
func newIdleHarness(t *testing.T, wrap func(store.Store) store.Store) *harness {
	t.Helper()
	return newIdleHarnessWith(t, wrap)
}

// newHarnessWith is newHarness with more plugins served beside the
// built-in and test ones.
func newHarnessWith(t *testing.T, extra ...*sdk.Plugin) *harness {
	t.Helper()
	h := newIdleHarnessWith(t, nil, extra...)
	if err := h.eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.eng.Stop() })
	return h
}

// newIdleHarnessWith is newIdleHarness with more plugins served.
func newIdleHarnessWith(t *testing.T, wrap func(store.Store) store.Store, extra ...*sdk.Plugin) *harness {
	t.Helper()
	s, err := sqlite.Open(context.Background(), filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	// The harness's project may run local.process nodes, as an admin's
	// grant would allow (auth_test.go tests the grants themselves).
	if err := s.PutGrant(context.Background(), caller.Project, "local.process"); err != nil {
		t.Fatal(err)
	}
	g := newGate()
	t.Cleanup(func() { close(g.release) })
	h := &harness{t: t, store: s, wrap: wrap, gate: g, clock: &clock{now: epoch},
		plugins: serve(t, append([]*sdk.Plugin{builtinPlugin(t), testPlugin(g)}, extra...)...)}
	h.eng = h.newEngine("", nil)
	return h
}

// newEngine returns an engine on the harness's store, plugins and clock,
// with a store of its own to kill.
func (h *harness) newEngine(id string, tune func(*engine.Config)) *engine.Engine {
	cfg := engine.Config{EngineID: id, CheckInterval: -1, Poll: 50 * time.Millisecond, Now: h.clock.Now, SecretsKey: testSecretsKey}
	if tune != nil {
		tune(&cfg)
	}
	h.crashes = newCrashStore(h.store)
	var es store.Store = h.crashes
	if h.wrap != nil {
		es = h.wrap(es)
	}
	return engine.New(es, h.plugins, hclog.NewNullLogger(), cfg)
}

// crash kills the engine where it stands: its store dies (if it has not
// already died where a test armed it to), then the engine is stopped, which
// ends its goroutines without a word reaching the store. The actions it was
// running stay RUNNING under its lease, with whatever they had committed.
func (h *harness) crash() {
	h.crashes.kill()
	h.eng.Stop()
}

// restart starts a new engine with the given id on the same store, plugins
// and clock, after the running one crashed.
func (h *harness) restart(id string, tune func(*engine.Config)) {
	h.t.Helper()
	h.eng = h.newEngine(id, tune)
	if err := h.eng.Start(context.Background()); err != nil {
		h.t.Fatalf("start the new engine: %v", err)
	}
}

// sub is the harness seen from a subtest, so that its failures are the
// subtest's.
func (h *harness) sub(t *testing.T) *harness {
	c := *h
	c.t = t
	return &c
}

func (h *harness) ctx() context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	h.t.Cleanup(cancel)
	return ctx
}

// profile creates a test.gate profile.
func (h *harness) profile(name string) {
	h.t.Helper()
	h.profileOf(name, "test.gate", map[string]any{"label": name})
}

func (h *harness) profileOf(name, typ string, props map[string]any) {
	h.t.Helper()
	spec := map[string]any{"type": typ, "version": "1.0", "properties": props}
	if _, err := h.eng.CreateProfile(h.ctx(), caller, name, spec, nil); err != nil {
		h.t.Fatalf("create profile %s: %v", name, err)
	}
}

// policy creates a policy; props are its spec's properties as JSON.
func (h *harness) policy(name, typ, version, props string) *model.Policy {
	h.t.Helper()
	spec := map[string]any{"type": typ, "version": version, "properties": decodeJSON(h.t, props)}
	p, err := h.eng.CreatePolicy(h.ctx(), caller, name, spec)
	if err != nil {
		h.t.Fatalf("create policy %s: %v", name, err)
	}
	return p
}

// attach attaches a policy to a cluster.
func (h *harness) attach(cl *model.Cluster, policy string) {
	h.t.Helper()
	h.ok(h.act(cl, `{"policy_attach": {"policy_id": "`+policy+`"}}`))
}

// act sends a cluster action with a JSON body, decoded as the API decodes
// it (numbers are float64).
func (h *harness) act(cl *model.Cluster, body string) (*model.Action, error) {
	h.t.Helper()
	return h.eng.ClusterAction(h.ctx(), caller, cl.ID, decodeJSON(h.t, body))
}

func decodeJSON(t *testing.T, s string) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		t.Fatalf("bad JSON in the test: %v: %s", err, s)
	}
	return m
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

// cluster creates a cluster of test.gate nodes on profile "p".
func (h *harness) cluster(name string, desired, timeout int) *model.Cluster {
	h.t.Helper()
	return h.create(engine.ClusterCreate{Name: name, Profile: "p", DesiredCapacity: &desired, Timeout: &timeout})
}

// create creates a cluster and waits until it is created.
func (h *harness) create(req engine.ClusterCreate) *model.Cluster {
	h.t.Helper()
	cl, a, err := h.eng.CreateCluster(h.ctx(), caller, req)
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

func (h *harness) getAction(id string) *model.Action {
	h.t.Helper()
	a, err := h.store.GetAction(h.ctx(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return a
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

// size is a cluster's size as a test expects it.
type size struct {
	nodes, desired, min, max int
}

// assertSize checks that a cluster is ACTIVE with the given size, and that
// its nodes are ACTIVE with distinct indexes.
func (h *harness) assertSize(clusterID string, want size) {
	h.t.Helper()
	cl := h.getCluster(clusterID)
	nodes := h.nodes(clusterID)
	got := size{len(nodes), cl.DesiredCapacity, cl.MinSize, cl.MaxSize}
	if got != want {
		h.t.Errorf("cluster %s: %d nodes, desired %d, min %d, max %d; want %d nodes, desired %d, min %d, max %d",
			cl.Name, got.nodes, got.desired, got.min, got.max, want.nodes, want.desired, want.min, want.max)
	}
	if cl.Status != model.ClusterActive {
		h.t.Errorf("cluster %s is %s (%s), want ACTIVE", cl.Name, cl.Status, cl.StatusReason)
	}
	seen := map[int]string{}
	for _, n := range nodes {
		if n.Status != model.NodeActive {
			h.t.Errorf("node %s (index %d) is %s (%s), want ACTIVE", n.Name, n.Index, n.Status, n.StatusReason)
		}
		if other, dup := seen[n.Index]; dup {
			h.t.Errorf("nodes %s and %s share the index %d", other, n.Name, n.Index)
		}
		seen[n.Index] = n.Name
	}
}

// indexes returns the sorted indexes of a cluster's nodes.
func (h *harness) indexes(clusterID string) []int {
	h.t.Helper()
	var out []int
	for _, n := range h.nodes(clusterID) {
		out = append(out, n.Index)
	}
	slices.Sort(out)
	return out
}

func ids(nodes []*model.Node) []string {
	out := make([]string, len(nodes))
	for i, n := range nodes {
		out[i] = n.ID
	}
	slices.Sort(out)
	return out
}

// waitFor waits until cond holds, failing with its last explanation after
// the deadline.
func waitFor(t *testing.T, d time.Duration, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %s: %s", d, why)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
