package engine_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// A liar is a profile driver written against the SDK that answers what a
// test tells it to: results for other nodes than it was given, none at all,
// or the same physical id for every node. The engine must hold its own
// records to what the driver did, and say so on the node when the driver's
// answer cannot be true.
type liar struct {
	mu sync.Mutex
	// answer, when set for a call, replaces the driver's honest results.
	answer map[string]func(nodes []sdk.Node) []sdk.Result
}

func newLiar() *liar {
	return &liar{answer: map[string]func([]sdk.Node) []sdk.Result{}}
}

// lie makes the driver answer call with fn from now on.
func (l *liar) lie(call string, fn func(nodes []sdk.Node) []sdk.Result) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.answer[call] = fn
}

func (l *liar) each(call string, nodes []sdk.Node) []sdk.Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	if fn := l.answer[call]; fn != nil {
		return fn(nodes)
	}
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		pid := n.PhysicalID
		if call == "create" {
			pid = "liar-" + n.ID
		}
		out[i] = sdk.Result{ID: n.ID, PhysicalID: pid, Healthy: true}
	}
	return out
}

func (l *liar) Create(_ context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return l.each("create", nodes)
}

func (l *liar) Delete(_ context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return l.each("delete", nodes)
}

func (l *liar) Check(_ context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return l.each("check", nodes)
}

func (l *liar) Update(_ context.Context, _, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return l.each("update", nodes)
}

func (l *liar) Recover(_ context.Context, _ sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	return l.each("recover", nodes)
}

// panicPolicy panics in its checks, and returns binding data JSON cannot
// hold when its spec says so.
type panicPolicy struct{}

func (panicPolicy) Attach(_ context.Context, p sdk.Spec, _ sdk.Cluster) (map[string]any, error) {
	if p.Properties["bad_data"] == true {
		return map[string]any{"ratio": math.Inf(1)}, nil
	}
	return map[string]any{}, nil
}

func (panicPolicy) Detach(context.Context, sdk.Spec, sdk.Cluster, map[string]any) error { return nil }

func (panicPolicy) Check(context.Context, sdk.CheckRequest) (sdk.CheckResult, error) {
	panic("a bug in the policy's check")
}

func liarPlugin(l *liar) *sdk.Plugin {
	return &sdk.Plugin{Name: "liar", Version: "1.0", Profiles: []sdk.ProfileType{{Type: "test.liar", Versions: []string{"1.0"},
		Description: "A driver whose answers a test makes up.", Schema: schema.Schema{}, Driver: l},
		{Type: "test.liar.schema", Versions: []string{"1.0"}, Description: "A driver whose schema's default breaks the schema's own rule.",
			Schema: schema.Schema{"level": {Type: schema.Integer, Default: int64(9), Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(5))}}}, Driver: l}},
		Policies: []sdk.PolicyType{{Type: "test.panic", Versions: []string{"1.0"}, Description: "A policy that panics in its checks.",
			Schema:  schema.Schema{"bad_data": {Type: schema.Boolean, Default: false}},
			Targets: []sdk.Target{{Phase: engine.PhaseBefore, Action: model.ClusterScaleOutAction}}, Policy: panicPolicy{}}}}
}

func newLiarHarness(t *testing.T) (*harness, *liar) {
	t.Helper()
	l := newLiar()
	h := newHarnessWith(t, liarPlugin(l))
	h.profileOf("lp", "test.liar", map[string]any{})
	return h, l
}

// liarCluster creates a cluster of n test.liar nodes with honest answers.
func liarCluster(h *harness, name string, n int) *model.Cluster {
	h.t.Helper()
	return h.create(engine.ClusterCreate{Name: name, Profile: "lp", DesiredCapacity: &n})
}

// nodeNamed returns the node of a list with the given id.
func nodeByID(t *testing.T, nodes []*model.Node, id string) *model.Node {
	t.Helper()
	for _, n := range nodes {
		if n.ID == id {
			return n
		}
	}
	t.Fatalf("no node %s", id)
	return nil
}

// A delete that the driver answers for one node of two must not drop the
// other node's row: nothing says its resource is gone, and without the row
// nothing would ever delete it.
func TestDeleteWithoutDriverResultKeepsNode(t *testing.T) {
	h, l := newLiarHarness(t)
	cl := liarCluster(h, "forgets", 2)
	before := h.nodes(cl.ID)
	forgotten := before[1]
	l.lie("delete", func(ns []sdk.Node) []sdk.Result {
		var out []sdk.Result
		for _, n := range ns {
			if n.ID != forgotten.ID {
				out = append(out, sdk.Result{ID: n.ID})
			}
		}
		return out
	})
	end := h.wait(h.eng.DeleteCluster(h.ctx(), caller, cl.ID, false))
	if end.Status != model.ActionFailed {
		t.Fatalf("deleting the cluster: %s (%s), want FAILED: one node's deletion was never confirmed", end.Status, end.StatusReason)
	}
	left := h.nodes(cl.ID)
	if len(left) != 1 || left[0].ID != forgotten.ID {
		t.Fatalf("nodes left: %v, want only %s, the one the driver gave no result for", ids(left), forgotten.Name)
	}
	n := left[0]
	want := "Failed in deleting node " + forgotten.Name + ": the driver returned no result for it"
	if n.Status != model.NodeError || n.StatusReason != want || n.PhysicalID != forgotten.PhysicalID {
		t.Errorf("node %s is %s (%q) with physical id %q; want ERROR (%q) with physical id %q", n.Name, n.Status, n.StatusReason, n.PhysicalID, want, forgotten.PhysicalID)
	}
	if !strings.Contains(end.StatusReason, want) {
		t.Errorf("the deletion's reason %q does not say %q", end.StatusReason, want)
	}
}

// A check the driver does not answer for a node, or answers twice for,
// fails saying so and leaves the node as it was: no answer is not an
// unhealthy node.
func TestCheckWithoutOneDriverResult(t *testing.T) {
	h, l := newLiarHarness(t)
	cl := liarCluster(h, "mute", 3)
	nodes := h.nodes(cl.ID)
	mute, twice := nodes[0], nodes[1]
	l.lie("check", func(ns []sdk.Node) []sdk.Result {
		var out []sdk.Result
		for _, n := range ns {
			switch n.ID {
			case mute.ID:
			case twice.ID:
				out = append(out, sdk.Result{ID: n.ID, Healthy: true, PhysicalID: n.PhysicalID}, sdk.Result{ID: n.ID, Healthy: false, Reason: "gone"})
			default:
				out = append(out, sdk.Result{ID: n.ID, Healthy: true, PhysicalID: n.PhysicalID})
			}
		}
		return out
	})
	end := h.wait(h.act(cl, `{"check": {}}`))
	if end.Status != model.ActionFailed {
		t.Fatalf("check: %s (%s), want FAILED", end.Status, end.StatusReason)
	}
	for _, want := range []string{"Failed in checking node " + mute.Name + ": the driver returned no result for it",
		"Failed in checking node " + twice.Name + ": the driver returned 2 results for it; one was expected"} {
		found := false
		kids, err := h.store.Children(h.ctx(), end.ID)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range kids {
			found = found || strings.Contains(c.StatusReason, want)
		}
		if !found && !strings.Contains(end.StatusReason, want) {
			t.Errorf("neither the check (%q) nor its node actions say %q", end.StatusReason, want)
		}
	}
	after := h.nodes(cl.ID)
	for _, n := range []*model.Node{mute, twice} {
		if got := nodeByID(t, after, n.ID); got.Status != model.NodeActive {
			t.Errorf("node %s is %s (%q) after a check the driver did not answer plainly; want it left ACTIVE", got.Name, got.Status, got.StatusReason)
		}
	}
}

// A driver that returns the physical id of one resource for two nodes
// gets the second node refused, in one call or across calls, and the
// refused node keeps no physical id, so deleting it leaves the other
// node's resource alone.
func TestSharedPhysicalIDRefused(t *testing.T) {
	h, l := newLiarHarness(t)
	l.lie("create", func(ns []sdk.Node) []sdk.Result {
		out := make([]sdk.Result, len(ns))
		for i, n := range ns {
			out[i] = sdk.Result{ID: n.ID, PhysicalID: "one-vm", Healthy: true}
		}
		return out
	})
	two := 2
	cl, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "shared", Profile: "lp", DesiredCapacity: &two})
	if end := h.wait(a, err); end.Status == model.ActionSucceeded {
		t.Fatalf("a cluster whose two nodes got one physical id was created: %s", end.StatusReason)
	}
	var holder *model.Node
	var refused []*model.Node
	for _, n := range h.nodes(cl.ID) {
		if n.Status == model.NodeActive && n.PhysicalID == "one-vm" && holder == nil {
			holder = n
		} else {
			refused = append(refused, n)
		}
	}
	if holder == nil || len(refused) != 1 {
		t.Fatalf("want one ACTIVE node on one-vm and one refused, got holder %v and refused %v", holder, ids(refused))
	}
	want := fmt.Sprintf("Failed in creating node %s: the driver returned physical id \"one-vm\", which node %s of the same call also got; two nodes cannot hold one resource",
		refused[0].Name, holder.Name)
	if r := refused[0]; r.Status != model.NodeError || r.StatusReason != want || r.PhysicalID != "" {
		t.Errorf("node %s is %s (%q) with physical id %q; want ERROR (%q) with none", r.Name, r.Status, r.StatusReason, r.PhysicalID, want)
	}

	// Across calls: a node created later on the same resource.
	n, a, err := h.eng.CreateNode(h.ctx(), caller, engine.NodeCreate{Name: "late", Profile: "lp"})
	if end := h.wait(a, err); end.Status != model.ActionFailed {
		t.Fatalf("creating a node on a resource node %s holds: %s (%s), want FAILED", holder.Name, end.Status, end.StatusReason)
	}
	late, err := h.store.GetNode(h.ctx(), n.ID)
	if err != nil {
		t.Fatal(err)
	}
	want = fmt.Sprintf("Failed in creating node late: the driver returned physical id \"one-vm\", which node %s (id %s) already holds; two nodes cannot hold one resource",
		holder.Name, holder.ID)
	if late.Status != model.NodeError || late.StatusReason != want || late.PhysicalID != "" {
		t.Errorf("node late is %s (%q) with physical id %q; want ERROR (%q) with none", late.Status, late.StatusReason, late.PhysicalID, want)
	}

	// Deleting the refused nodes asks the driver about no resource.
	var deleted []string
	l.lie("delete", func(ns []sdk.Node) []sdk.Result {
		out := make([]sdk.Result, len(ns))
		for i, n := range ns {
			deleted = append(deleted, n.PhysicalID)
			out[i] = sdk.Result{ID: n.ID}
		}
		return out
	})
	h.ok(h.eng.DeleteNode(h.ctx(), caller, late.ID, false))
	if slices.Contains(deleted, "one-vm") {
		t.Errorf("deleting node late asked the driver to delete one-vm, node %s's resource", holder.Name)
	}
}

// A driver that panics in a call, or returns data JSON cannot hold, fails
// the nodes of that call with a message that says so, and the plugin
// serves on: the panic does not end it (and with it every call in flight
// in it), and a node whose data is unusable keeps the physical id the
// driver made, so deleting it reaches the resource.
func TestPanickingOrUnencodableDriverFailsItsNodesAlone(t *testing.T) {
	h, l := newLiarHarness(t)
	l.lie("create", func([]sdk.Node) []sdk.Result { panic("index out of range [3] with length 3") })
	one := 1
	cl, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "panics", Profile: "lp", DesiredCapacity: &one})
	if end := h.wait(a, err); end.Status != model.ActionFailed {
		t.Fatalf("create with a panicking driver: %s (%s), want FAILED", end.Status, end.StatusReason)
	}
	n := h.nodes(cl.ID)[0]
	want := "Failed in creating node " + n.Name + ": profile type test.liar panicked in create: index out of range [3] with length 3"
	if n.Status != model.NodeError || n.StatusReason != want {
		t.Errorf("node %s is %s (%q), want ERROR (%q)", n.Name, n.Status, n.StatusReason, want)
	}

	l.lie("create", func(ns []sdk.Node) []sdk.Result {
		out := make([]sdk.Result, len(ns))
		for i, n := range ns {
			out[i] = sdk.Result{ID: n.ID, PhysicalID: "nan-" + n.ID, Healthy: true, Data: map[string]any{"addr": "10.0.0.1", "load": math.NaN()}}
		}
		return out
	})
	cl, a, err = h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "nan", Profile: "lp", DesiredCapacity: &one})
	if end := h.wait(a, err); end.Status != model.ActionFailed {
		t.Fatalf("create with unencodable data: %s (%s), want FAILED", end.Status, end.StatusReason)
	}
	n = h.nodes(cl.ID)[0]
	want = "Failed in creating node " + n.Name + ": the driver's result for node " + n.ID + " is unusable: data.load cannot be encoded as JSON: json: unsupported value: NaN"
	if n.Status != model.NodeError || n.StatusReason != want || n.PhysicalID != "nan-"+n.ID {
		t.Errorf("node %s is %s (%q) with physical id %q, want ERROR (%q) with physical id nan-%s", n.Name, n.Status, n.StatusReason, n.PhysicalID, want, n.ID)
	}

	// Data over the bound is not kept; the node keeps its physical id.
	l.lie("create", func(ns []sdk.Node) []sdk.Result {
		out := make([]sdk.Result, len(ns))
		for i, n := range ns {
			out[i] = sdk.Result{ID: n.ID, PhysicalID: "big-" + n.ID, Healthy: true, Data: map[string]any{"blob": strings.Repeat("x", 2<<20)}}
		}
		return out
	})
	cl, a, err = h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "big", Profile: "lp", DesiredCapacity: &one})
	if end := h.wait(a, err); end.Status != model.ActionFailed {
		t.Fatalf("create with oversized data: %s (%s), want FAILED", end.Status, end.StatusReason)
	}
	n = h.nodes(cl.ID)[0]
	want = "Failed in creating node " + n.Name + ": the driver returned 2097163 bytes of data and 0 bytes of state for the node; at most 1048576 of data and 1048576 of state are kept"
	if n.Status != model.NodeError || n.StatusReason != want || n.PhysicalID != "big-"+n.ID || n.Data["blob"] != nil {
		t.Errorf("node %s is %s (%q) with physical id %q, want ERROR (%q) with physical id big-%s and no blob", n.Name, n.Status, n.StatusReason, n.PhysicalID, want, n.ID)
	}

	// The plugin still serves.
	l.lie("create", nil)
	liarCluster(h, "after", 2)
}

// A policy whose attach returns data JSON cannot hold fails the attach
// saying so, and one that panics in its check fails the action it checks,
// naming the policy type; the plugin serves on.
func TestHostilePolicyFailsItsActionAlone(t *testing.T) {
	h, _ := newLiarHarness(t)
	cl := liarCluster(h, "guarded", 1)
	h.policy("bad-data", "test.panic", "1.0", `{"bad_data": true}`)
	end := h.wait(h.act(cl, `{"policy_attach": {"policy_id": "bad-data"}}`))
	want := "policy type test.panic returned unusable binding data: binding data.ratio cannot be encoded as JSON: json: unsupported value: +Inf"
	if end.Status != model.ActionFailed || !strings.Contains(end.StatusReason, want) {
		t.Fatalf("attach: %s (%q), want FAILED saying %q", end.Status, end.StatusReason, want)
	}

	h.policy("panics", "test.panic", "1.0", `{}`)
	h.attach(cl, "panics")
	end = h.wait(h.act(cl, `{"scale_out": {"count": 1}}`))
	want = "policy type test.panic panicked in check: a bug in the policy's check"
	if end.Status != model.ActionFailed || !strings.Contains(end.StatusReason, want) {
		t.Fatalf("scale-out: %s (%q), want FAILED saying %q", end.Status, end.StatusReason, want)
	}
	h.assertSize(cl.ID, size{1, 1, 0, -1})
}

// A profile type whose schema gives a property a default that breaks the
// property's own rule has a profile that leaves it unset refused, naming
// the field to set, rather than stored with a value the driver's schema
// promises it never gets.
func TestLyingSchemaDefaultRefused(t *testing.T) {
	h, _ := newLiarHarness(t)
	spec := map[string]any{"type": "test.liar.schema", "version": "1.0", "properties": map[string]any{}}
	_, err := h.eng.CreateProfile(h.ctx(), caller, "lying", spec, nil)
	const want = "properties.level: is not set, and the default this type gives it breaks the type's own schema (must be at most 5, got 9); set it."
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("create a profile on the lying default: %v, want an error saying %q", err, want)
	}
	if status, _ := engine.HTTPStatus(err); status != 400 {
		t.Errorf("status %d, want 400", status)
	}
	spec["properties"] = map[string]any{"level": 3}
	if _, err := h.eng.CreateProfile(h.ctx(), caller, "set", spec, nil); err != nil {
		t.Fatalf("create a profile that sets level: %v", err)
	}
}
