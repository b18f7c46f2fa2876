package engine_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// A crash is where an engine dies in the middle of an action: a plugin call
// held at a closed gate, or the nth call of a store method (the moment one
// step is done and the next not). The engine is killed there and a new one
// started on the same store, in one of three ways.
var resumes = []struct {
	name string
	// resume starts the new engine and returns once it is started; the
	// action then runs to its end.
	resume func(h *harness, a *model.Action)
}{
	// The agent restarts: the same engine id takes its actions back at once.
	{"same engine", func(h *harness, _ *model.Action) {
		h.restart(h.eng.ID(), nil)
	}},
	// Another agent starts after the dead one's leases expired.
	{"after lease expiry", func(h *harness, _ *model.Action) {
		h.clock.advance(31 * time.Second) // past the default 30s lease
		h.restart("other", nil)
	}},
	// Another agent, already running, leaves the action alone while the
	// dead one's lease lasts, and takes it over once the lease expired.
	{"taken over", func(h *harness, a *model.Action) {
		old := h.eng.ID()
		// A short lease makes the new engine look for expired leases every 100ms.
		h.restart("other", func(c *engine.Config) { c.Lease = 300 * time.Millisecond })
		if got := h.getAction(a.ID); got.Status != model.ActionRunning || got.Owner != old {
			h.t.Fatalf("before the dead engine's lease expired, its action is %s owned by %q; want RUNNING owned by %q", got.Status, got.Owner, old)
		}
		h.clock.advance(31 * time.Second)
	}},
}

// resumeCase is an action that crashes its engine and must still end right.
type resumeCase struct {
	name string
	// setup makes what the action works on and returns its cluster (nil
	// when the action creates it).
	setup func(h *harness) *model.Cluster
	// crash arms where the engine dies: close a gate, or arm the store.
	crash func(h *harness)
	run   func(h *harness, cl *model.Cluster) (*model.Cluster, *model.Action, error)
	// check checks the result after the resumed action succeeded.
	check func(h *harness, cl *model.Cluster, a *model.Action, before []*model.Node)
}

func atGate(call string, passes int) func(*harness) {
	return func(h *harness) { h.gate.closeAfter(call, passes) }
}

func atStore(method string, n int) func(*harness) {
	return func(h *harness) { h.crashes.dieAt(method, n) }
}

func gateCluster(desired int) func(h *harness) *model.Cluster {
	return func(h *harness) *model.Cluster { return h.cluster("c", desired, 60) }
}

func action(body string) func(h *harness, cl *model.Cluster) (*model.Cluster, *model.Action, error) {
	return func(h *harness, cl *model.Cluster) (*model.Cluster, *model.Action, error) {
		a, err := h.act(cl, body)
		return cl, a, err
	}
}

func createCluster(h *harness, _ *model.Cluster) (*model.Cluster, *model.Action, error) {
	desired := 3
	return h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "c", Profile: "p", DesiredCapacity: &desired})
}

func deleteCluster(h *harness, cl *model.Cluster) (*model.Cluster, *model.Action, error) {
	a, err := h.eng.DeleteCluster(h.ctx(), caller, cl.ID, false)
	return cl, a, err
}

// grown checks that a cluster has the size given, that the action forked
// one creation per new node, and that the nodes the driver holds are the
// cluster's: none created twice over, none leaked.
func grown(want size, created int) func(h *harness, cl *model.Cluster, a *model.Action, before []*model.Node) {
	return func(h *harness, cl *model.Cluster, a *model.Action, _ []*model.Node) {
		h.t.Helper()
		h.assertSize(cl.ID, want)
		if got := h.children(a.ID, model.NodeCreateAction); got != created {
			h.t.Errorf("the action forked %d node creations, want %d", got, created)
		}
		h.driverHoldsClusterNodes(cl.ID)
	}
}

// shrunk checks that a cluster kept the nodes with the given indexes and
// that the nodes deleted are the ones the action chose before the crash.
func shrunk(want size, kept ...int) func(h *harness, cl *model.Cluster, a *model.Action, before []*model.Node) {
	return func(h *harness, cl *model.Cluster, a *model.Action, before []*model.Node) {
		h.t.Helper()
		h.assertSize(cl.ID, want)
		if got := h.indexes(cl.ID); !slices.Equal(got, kept) {
			h.t.Errorf("the cluster kept the nodes with indexes %v, want %v", got, kept)
		}
		h.driverHoldsClusterNodes(cl.ID)
		var gone []string
		for _, n := range before {
			if !slices.Contains(ids(h.nodes(cl.ID)), n.ID) {
				gone = append(gone, n.ID)
			}
		}
		slices.Sort(gone)
		var deleted []string
		for id := range h.gate.calls("delete") {
			deleted = append(deleted, id)
		}
		slices.Sort(deleted)
		if !slices.Equal(deleted, gone) {
			h.t.Errorf("the driver deleted %v, want the nodes that left %v", deleted, gone)
		}
	}
}

// agedGateCluster makes a cluster of test.gate nodes: indexes 1 and 2 at
// the epoch, 3 and 4 a minute later; a deletion policy that removes the
// oldest first is attached.
func agedGateCluster(h *harness) *model.Cluster {
	cl := h.cluster("c", 2, 60)
	h.clock.advance(time.Minute)
	h.ok(h.act(cl, `{"scale_out": {"count": 2}}`))
	h.policy("oldest", "senlin.policy.deletion", "1.1", `{"criteria": "OLDEST_FIRST"}`)
	h.attach(cl, "oldest")
	return cl
}

var resumeCases = []resumeCase{
	{name: "create/node creation in flight", crash: atGate("create", 0), run: createCluster, check: grown(size{3, 3, 0, -1}, 3)},
	// The driver created the nodes; the engine died before it recorded them.
	{name: "create/nodes created, not recorded", crash: atStore("RecordNodeResults", 1), run: createCluster, check: grown(size{3, 3, 0, -1}, 3)},
	// The engine died inside the transaction that forks the nodes.
	{name: "create/forking the nodes", crash: atStore("CreateActions", 2), run: createCluster, check: grown(size{3, 3, 0, -1}, 3)},

	{name: "delete/node deletion in flight", setup: gateCluster(3), crash: atGate("delete", 0), run: deleteCluster},
	// The driver deleted the nodes; the engine died before it removed them.
	{name: "delete/nodes deleted, not removed", setup: gateCluster(3), crash: atStore("DeleteNodes", 1), run: deleteCluster},
	{name: "delete/cluster row left", setup: gateCluster(3), crash: atStore("DeleteCluster", 1), run: deleteCluster},

	{name: "resize/node creation in flight", setup: gateCluster(2), crash: atGate("create", 0),
		run: action(`{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 5}}`), check: grown(size{5, 5, 0, -1}, 3)},
	{name: "resize/node deletion in flight", setup: gateCluster(4), crash: atGate("delete", 0),
		run: action(`{"resize": {"adjustment_type": "CHANGE_IN_CAPACITY", "number": -3}}`), check: shrunk(size{1, 1, 0, -1}, 1)},

	{name: "scale-out/node creation in flight", setup: gateCluster(2), crash: atGate("create", 0),
		run: action(`{"scale_out": {"count": 2}}`), check: grown(size{4, 4, 0, -1}, 2)},
	{name: "scale-out/forking the nodes", setup: gateCluster(2), crash: atStore("CreateActions", 2),
		run: action(`{"scale_out": {"count": 2}}`), check: grown(size{4, 4, 0, -1}, 2)},
	{name: "scale-out/nodes created, not recorded", setup: gateCluster(2), crash: atStore("RecordNodeResults", 1),
		run: action(`{"scale_out": {"count": 2}}`), check: grown(size{4, 4, 0, -1}, 2)},
	// The scaling policy's count, decided before the crash, is the count.
	{name: "scale-out/sized by a policy", setup: func(h *harness) *model.Cluster {
		cl := h.cluster("c", 2, 60)
		h.policy("by3", "senlin.policy.scaling", "1.0", `{"event": "CLUSTER_SCALE_OUT", "adjustment": {"number": 3}}`)
		h.attach(cl, "by3")
		return cl
	}, crash: atGate("create", 0), run: action(`{"scale_out": {}}`), check: grown(size{5, 5, 0, -1}, 3)},

	{name: "scale-in/node deletion in flight", setup: gateCluster(4), crash: atGate("delete", 0),
		run: action(`{"scale_in": {"count": 2}}`), check: shrunk(size{2, 2, 0, -1}, 1, 2)},
	{name: "scale-in/nodes deleted, not removed", setup: gateCluster(4), crash: atStore("DeleteNodes", 1),
		run: action(`{"scale_in": {"count": 2}}`), check: shrunk(size{2, 2, 0, -1}, 1, 2)},
	// The deletion policy's victims, chosen before the crash, are the
	// nodes deleted.
	{name: "scale-in/victims chosen by a policy", setup: agedGateCluster, crash: atGate("delete", 0),
		run: action(`{"scale_in": {"count": 2}}`), check: shrunk(size{2, 2, 0, -1}, 3, 4)},

	// One node per batch: the second batch is in flight.
	{name: "update/second batch in flight", setup: updatable("stop-first"), crash: atGate("update", 1), run: updateToP2, check: rolledOut("stop-first")},
	// The engine died in the transaction that forks the second batch: the
	// batch is recorded, its node update not forked.
	{name: "update/second batch recorded, not forked", setup: updatable("stop-first"), crash: atStore("CreateActions", 3), run: updateToP2,
		check: rolledOut("stop-first")},
	// The second batch's node update finished; the engine died before it
	// counted the batch in the update's progress.
	{name: "update/second batch done, not counted", setup: updatable("stop-first"), crash: atStore("Children", 2), run: updateToP2,
		check: rolledOut("stop-first")},
	// start-first: the second batch's replacement is being created.
	{name: "update/start-first replacement in flight", setup: updatable("start-first"), crash: atGate("create", 1), run: updateToP2,
		check: rolledOut("start-first")},
	// start-first: the first batch's old node is being deleted.
	{name: "update/start-first swap in flight", setup: updatable("start-first"), crash: atGate("delete", 0), run: updateToP2,
		check: rolledOut("start-first")},
}

// TestCrashedActionsResume kills the engine in the middle of each stage of
// each cluster action and starts a new engine on the same store (the same
// agent restarting, or another agent after the dead one's lease expired):
// the action resumes where it stopped and succeeds, with the nodes it
// should leave, none created or deleted twice over, none leaked.
func TestCrashedActionsResume(t *testing.T) {
	for _, c := range resumeCases {
		for _, r := range resumes {
			t.Run(c.name+"/"+r.name, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, nil)
				h.profile("p")
				var cl *model.Cluster
				var before []*model.Node
				if c.setup != nil {
					cl = c.setup(h)
					before = h.nodes(cl.ID)
				}
				c.crash(h)
				cl, a, err := c.run(h, cl)
				if err != nil {
					t.Fatalf("submit: %v", err)
				}
				select {
				case <-h.gate.entered:
				case <-h.crashes.c.died:
				case <-time.After(20 * time.Second):
					t.Fatal("the action reached neither its gate nor its crash within 20s")
				}
				h.crash()
				h.gate.open("create")
				h.gate.open("delete")
				h.gate.open("update")
				r.resume(h, a)
				end := h.wait(a, nil)
				if end.Status != model.ActionSucceeded {
					t.Fatalf("after the crash, %s ended %s %q, want SUCCEEDED", end.Action, end.Status, end.StatusReason)
				}
				if c.check != nil {
					c.check(h, cl, a, before)
					return
				}
				// A deletion: nothing is left, in the store or the driver.
				if _, err := h.store.GetCluster(h.ctx(), cl.ID); err == nil {
					t.Errorf("the cluster still exists")
				}
				if left := h.nodes(cl.ID); len(left) > 0 {
					t.Errorf("%d nodes are left in the store", len(left))
				}
				if live := h.gate.liveNodes(); len(live) > 0 {
					t.Errorf("the driver still holds the nodes %v", live)
				}
			})
		}
	}
}

// TestCrashWhileForkingInParts kills the engine while a cluster's creation
// forks its nodes in parts (two nodes per part here), inside the second
// part's transaction: the first part's nodes and children are committed,
// the second's rolled back. The resumed action, on an engine that forks
// in parts of the default size, forks only the nodes it had not: five
// nodes with distinct indexes, one creation each, and no count of forked
// nodes left in the action's data.
func TestCrashWhileForkingInParts(t *testing.T) {
	for _, r := range resumes {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.profile("p")
			h.eng.Stop()
			h.restart("forker", func(c *engine.Config) { c.ForkPart = 2 })
			// The first call records the creation itself, the second
			// and third fork the first and second parts.
			h.crashes.dieAt("CreateActions", 3)
			desired := 5
			cl, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "c", Profile: "p", DesiredCapacity: &desired})
			if err != nil {
				t.Fatalf("submit: %v", err)
			}
			h.waitCrash("the creation's second part")
			h.crash()
			if got := h.children(a.ID, model.NodeCreateAction); got != 2 {
				t.Errorf("at the crash the creation had forked %d nodes, want the first part's 2", got)
			}
			r.resume(h, a)
			end := h.wait(a, nil)
			if end.Status != model.ActionSucceeded {
				t.Fatalf("after the crash, the creation ended %s %q, want SUCCEEDED", end.Status, end.StatusReason)
			}
			grown(size{5, 5, 0, -1}, 5)(h, cl, a, nil)
			if got := h.indexes(cl.ID); !slices.Equal(got, []int{1, 2, 3, 4, 5}) {
				t.Errorf("the nodes' indexes are %v, want 1 to 5", got)
			}
			if v, ok := end.Data["forked.create"]; ok {
				t.Errorf("the creation's data still counts %v forked nodes", v)
			}
		})
	}
}

// TestForkCountUnreadable: a creation whose count of forked nodes is not
// a whole number from 0 to its size fails with a sentence naming the
// field, and forks nothing rather than forking its nodes twice.
func TestForkCountUnreadable(t *testing.T) {
	for name, c := range map[string]struct {
		count any
		want  string
	}{
		"a word":        {"two", "data.forked.create is a JSON string where an integer belongs"},
		"negative":      {-1, "data.forked.create must be between 0 and 3, got -1."},
		"past the size": {4, "data.forked.create must be between 0 and 3, got 4."},
	} {
		t.Run(name, func(t *testing.T) {
			h := newIdleHarness(t, nil)
			h.profile("p")
			desired := 3
			_, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "c", Profile: "p", DesiredCapacity: &desired})
			if err != nil {
				t.Fatalf("submit: %v", err)
			}
			stored := h.getAction(a.ID)
			stored.Data["forked.create"] = c.count
			if err := h.store.UpdateActions(h.ctx(), []*model.Action{stored}); err != nil {
				t.Fatal(err)
			}
			if err := h.eng.Start(context.Background()); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(h.eng.Stop)
			end := h.wait(a, nil)
			if end.Status != model.ActionFailed || !strings.Contains(end.StatusReason, c.want) {
				t.Errorf("the creation ended %s %q, want FAILED with %q", end.Status, end.StatusReason, c.want)
			}
			if got := h.children(a.ID, model.NodeCreateAction); got != 0 {
				t.Errorf("the creation forked %d nodes, want none", got)
			}
		})
	}
}

// failingFork fails one call of CreateActions, the left-th from the
// store's start (the first records the creation itself), as a full disk
// would, and lets every other call through.
type failingFork struct {
	store.Store
	left *atomic.Int32
}

func (s failingFork) InTx(ctx context.Context, fn func(tx store.Store) error) error {
	return s.Store.InTx(ctx, func(tx store.Store) error { return fn(failingFork{tx, s.left}) })
}

func (s failingFork) CreateActions(ctx context.Context, actions []*model.Action) error {
	if s.left.Add(-1) == 0 {
		return errors.New("disk full")
	}
	return s.Store.CreateActions(ctx, actions)
}

// TestForkFailingHalfWay: a creation whose second part of nodes cannot be
// forked fails as any failed step does, and leaves neither its cluster
// CREATING nor a child waiting: the first part's children end (created or
// cancelled), the cluster settles with the cause, and no node of the
// second part exists.
func TestForkFailingHalfWay(t *testing.T) {
	left := &atomic.Int32{}
	h := newHarness(t, func(s store.Store) store.Store { return failingFork{s, left} })
	h.profile("p")
	h.eng.Stop()
	h.restart("forker", func(c *engine.Config) { c.ForkPart = 2 })
	left.Store(3)
	desired := 5
	cl, a, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "c", Profile: "p", DesiredCapacity: &desired})
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	end := h.wait(a, nil)
	if end.Status != model.ActionFailed || !strings.Contains(end.StatusReason, "disk full") {
		t.Errorf("the creation ended %s %q, want FAILED for the full disk", end.Status, end.StatusReason)
	}
	// The rolled-back part's nodes are not reported as added.
	if added, _ := end.Outputs["nodes_added"].([]any); len(added) != 2 {
		t.Errorf("the creation reports the nodes %v added, want the first part's 2", end.Outputs["nodes_added"])
	}
	got := h.getCluster(cl.ID)
	if got.Status == model.ClusterCreating || !strings.Contains(got.StatusReason, "disk full") {
		t.Errorf("the cluster is %s %q, want it settled with the cause", got.Status, got.StatusReason)
	}
	if got := h.indexes(cl.ID); !slices.Equal(got, []int{1, 2}) {
		t.Errorf("the cluster's nodes have indexes %v, want the first part's 1 and 2", got)
	}
	waitFor(t, 10*time.Second, func() (bool, string) {
		kids, err := h.store.Children(h.ctx(), a.ID)
		if err != nil {
			return false, err.Error()
		}
		for _, k := range kids {
			if !k.Terminal() {
				return false, fmt.Sprintf("child %s is still %s", k.Name, k.Status)
			}
		}
		return len(kids) == 2, fmt.Sprintf("the creation has %d children, want the first part's 2", len(kids))
	})
	mine := ids(h.nodes(cl.ID))
	for _, id := range h.gate.liveNodes() {
		if !slices.Contains(mine, id) {
			t.Errorf("the driver holds node %s, which is not the cluster's", id)
		}
	}
}

// waitCrash waits until the store died where the test armed it to, at
// the step named what.
func (h *harness) waitCrash(what string) {
	h.t.Helper()
	select {
	case <-h.crashes.c.died:
	case <-time.After(20 * time.Second):
		h.t.Fatalf("the action did not reach %s within 20s", what)
	}
}

// children counts an action's children of a kind.
func (h *harness) children(parentID, action string) int {
	h.t.Helper()
	kids, err := h.store.Children(h.ctx(), parentID)
	if err != nil {
		h.t.Fatal(err)
	}
	n := 0
	for _, k := range kids {
		if k.Action == action {
			n++
		}
	}
	return n
}

// driverHoldsClusterNodes checks that the nodes the test driver holds are
// the cluster's nodes, no more and no fewer.
func (h *harness) driverHoldsClusterNodes(clusterID string) {
	h.t.Helper()
	if store, driver := ids(h.nodes(clusterID)), h.gate.liveNodes(); !slices.Equal(store, driver) {
		h.t.Errorf("the store has the nodes %v, the driver holds %v", store, driver)
	}
}

// TestCrashAtLockRelease kills the engine as an action that has done its
// work releases its cluster's lock: the action's end and the release
// commit together, so the action is resumed and ends, and the cluster's
// next action runs instead of waiting for a lock no one will release.
func TestCrashAtLockRelease(t *testing.T) {
	for _, r := range resumes {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t, nil)
			h.profile("p")
			cl := h.cluster("c", 1, 60)
			h.crashes.dieAt("ReleaseClusterLock", 1)
			a, err := h.act(cl, `{"scale_out": {"count": 1}}`)
			if err != nil {
				t.Fatalf("submit: %v", err)
			}
			h.waitCrash("the scale-out's lock release")
			h.crash()
			r.resume(h, a)
			if end := h.wait(a, nil); end.Status != model.ActionSucceeded {
				t.Fatalf("after the crash, the scale-out ended %s %q, want SUCCEEDED", end.Status, end.StatusReason)
			}
			ctx, cancel := context.WithTimeout(h.ctx(), 20*time.Second)
			defer cancel()
			next, err := h.act(cl, `{"scale_out": {"count": 1}}`)
			if err != nil {
				t.Fatalf("the next action was refused: %v", err)
			}
			end, err := h.eng.Wait(ctx, next.ID)
			if err != nil {
				t.Fatalf("the next action did not end within 20s (the cluster's lock is still held?): %v", err)
			}
			if end.Status != model.ActionSucceeded {
				t.Fatalf("the next scale-out ended %s %q", end.Status, end.StatusReason)
			}
			if got := len(h.nodes(cl.ID)); got != 3 {
				t.Errorf("the cluster has %d nodes, want 3", got)
			}
		})
	}
}
