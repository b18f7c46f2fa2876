package engine_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// noopCluster creates a cluster of built-in grove.noop nodes on profile
// "noop", which the harness must have.
func (h *harness) noopCluster(name string, desired, min, max int) *model.Cluster {
	h.t.Helper()
	return h.create(engine.ClusterCreate{Name: name, Profile: "noop", DesiredCapacity: &desired, MinSize: &min, MaxSize: &max})
}

// snapshot is what a test compares to tell that an action changed nothing:
// a cluster, its nodes, and where some other nodes are.
type snapshot struct {
	status  string
	desired int
	min     int
	max     int
	profile string
	nodes   []string
	others  []string // "id cluster-id status" of each other node, or "id gone"
}

// snap takes a cluster's snapshot with the other nodes given.
func (h *harness) snap(clusterID string, others ...*model.Node) snapshot {
	h.t.Helper()
	cl := h.getCluster(clusterID)
	s := snapshot{status: cl.Status, desired: cl.DesiredCapacity, min: cl.MinSize, max: cl.MaxSize, profile: cl.ProfileID, nodes: ids(h.nodes(clusterID))}
	for _, o := range others {
		n, err := h.store.GetNode(h.ctx(), o.ID)
		if err != nil {
			s.others = append(s.others, o.ID+" gone")
			continue
		}
		s.others = append(s.others, fmt.Sprintf("%s %q %s", n.ID, n.ClusterID, n.Status))
	}
	return s
}

func (s snapshot) String() string {
	return fmt.Sprintf("%s desired %d min %d max %d, profile %s, nodes %v, others %v", s.status, s.desired, s.min, s.max, s.profile, s.nodes, s.others)
}

func (s snapshot) equal(o snapshot) bool {
	return s.status == o.status && s.desired == o.desired && s.min == o.min && s.max == o.max && s.profile == o.profile &&
		slices.Equal(s.nodes, o.nodes) && slices.Equal(s.others, o.others)
}

// TestPolicyRefusalChangesNothing attaches a policy that refuses, and runs
// each cluster action it checks: the action fails with the policy's name
// and reason, and the cluster, its nodes and the orphan nodes are as they
// were.
func TestPolicyRefusalChangesNothing(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("noop", "grove.noop", map[string]any{})
	h.profileOf("noop2", "grove.noop", map[string]any{"label": "two"})
	h.policy("no", "test.refuse", "1.0", `{"reason": "Refused by the test."}`)
	cases := []struct {
		name string
		run  func(h *harness, cl *model.Cluster, spare *model.Node) (*model.Action, error)
	}{
		{"resize", func(h *harness, cl *model.Cluster, _ *model.Node) (*model.Action, error) {
			return h.act(cl, `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 4}}`)
		}},
		{"scale-out", func(h *harness, cl *model.Cluster, _ *model.Node) (*model.Action, error) {
			return h.act(cl, `{"scale_out": {"count": 2}}`)
		}},
		{"scale-in", func(h *harness, cl *model.Cluster, _ *model.Node) (*model.Action, error) {
			return h.act(cl, `{"scale_in": {"count": 1}}`)
		}},
		{"add-nodes", func(h *harness, cl *model.Cluster, spare *model.Node) (*model.Action, error) {
			return h.act(cl, `{"add_nodes": {"nodes": ["`+spare.ID+`"]}}`)
		}},
		{"del-nodes", func(h *harness, cl *model.Cluster, _ *model.Node) (*model.Action, error) {
			return h.act(cl, `{"del_nodes": {"nodes": ["`+h.nodes(cl.ID)[0].ID+`"], "destroy_after_deletion": true}}`)
		}},
		{"replace-nodes", func(h *harness, cl *model.Cluster, spare *model.Node) (*model.Action, error) {
			return h.act(cl, `{"replace_nodes": {"nodes": {"`+h.nodes(cl.ID)[0].ID+`": "`+spare.ID+`"}}}`)
		}},
		{"recover", func(h *harness, cl *model.Cluster, _ *model.Node) (*model.Action, error) {
			return h.act(cl, `{"recover": {"check": true}}`)
		}},
		{"update", func(h *harness, cl *model.Cluster, _ *model.Node) (*model.Action, error) {
			p2, desired := "noop2", 3
			_, a, err := h.eng.UpdateCluster(h.ctx(), caller, cl.ID, engine.ClusterUpdate{Profile: &p2, DesiredCapacity: &desired})
			return a, err
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := h.sub(t)
			cl := h.noopCluster(c.name, 2, 0, -1)
			n, a, err := h.eng.CreateNode(h.ctx(), caller, engine.NodeCreate{Name: "spare-" + c.name, Profile: "noop"})
			h.ok(a, err)
			h.attach(cl, "no")
			before := h.snap(cl.ID, n)
			end := h.wait(c.run(h, cl, n))
			if want := "Policy check failure: Failed policy 'no': Refused by the test."; end.Status != model.ActionFailed || end.StatusReason != want {
				t.Errorf("%s ended %s %q, want FAILED %q", end.Action, end.Status, end.StatusReason, want)
			}
			if after := h.snap(cl.ID, n); !after.equal(before) {
				t.Errorf("the refused %s changed the cluster:\nbefore %v\nafter  %v", end.Action, before, after)
			}
		})
	}
}

// TestPolicyMarksNodesWarning: a check naming nodes under
// sdk.DataNodeWarnings marks those of the cluster WARNING with its reason
// (Senlin's load-balancing policy on a member it cannot remove); the
// others, and ids of no node of the cluster, are left alone.
func TestPolicyMarksNodesWarning(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("noop", "grove.noop", map[string]any{})
	h.policy("lb", "test.warn", "1.0", `{}`)
	cl := h.noopCluster("warned", 2, 0, -1)
	h.attach(cl, "lb")
	end := h.wait(h.act(cl, `{"scale_in": {"count": 1}}`))
	if end.Status != model.ActionFailed || !strings.Contains(end.StatusReason, "Failed in removing node from lb pool.") {
		t.Fatalf("scale-in ended %s %q", end.Status, end.StatusReason)
	}
	for _, n := range h.nodes(cl.ID) {
		want, reason := model.NodeActive, ""
		if n.Index == 1 {
			want, reason = model.NodeWarning, "Failed in removing node from lb pool."
		}
		if n.Status != want || (reason != "" && n.StatusReason != reason) {
			t.Errorf("node %d: %s %q, want %s %q", n.Index, n.Status, n.StatusReason, want, reason)
		}
	}
}

// agedCluster creates a cluster of four grove.noop nodes: indexes 1 and 2
// created at the harness's epoch, 3 and 4 a minute later.
func (h *harness) agedCluster(name string) *model.Cluster {
	h.t.Helper()
	cl := h.noopCluster(name, 2, 0, -1)
	h.clock.advance(time.Minute)
	h.ok(h.act(cl, `{"scale_out": {"count": 2}}`))
	return cl
}

// TestDeletionPolicyDecidesWhatLeaves checks that what the built-in
// deletion policy decides is what the engine does: the victims it picks
// (the oldest nodes, where the engine alone would remove the highest
// indexes) are the nodes removed, and its destroy_after_deletion and
// reduce_desired_capacity settings win over the request's.
func TestDeletionPolicyDecidesWhatLeaves(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("noop", "grove.noop", map[string]any{})
	cases := []struct {
		name     string
		policy   string // the policy's properties
		body     string // the action; "$3" is replaced by node 3's id
		kept     []int  // indexes of the nodes left in the cluster
		orphaned []int  // indexes of the nodes left as orphans
		desired  int
	}{
		{name: "scale in removes the oldest", policy: `{"criteria": "OLDEST_FIRST"}`, body: `{"scale_in": {"count": 2}}`, kept: []int{3, 4}, desired: 2},
		{name: "resize removes the oldest", policy: `{"criteria": "OLDEST_FIRST"}`, body: `{"resize": {"adjustment_type": "EXACT_CAPACITY", "number": 3}}`, kept: []int{2, 3, 4}, desired: 3},
		{name: "victims are kept as orphans", policy: `{"criteria": "OLDEST_FIRST", "destroy_after_deletion": false}`, body: `{"scale_in": {"count": 2}}`,
			kept: []int{3, 4}, orphaned: []int{1, 2}, desired: 2},
		{name: "del_nodes keeps the node and the desired capacity", policy: `{"destroy_after_deletion": false, "reduce_desired_capacity": false}`,
			body: `{"del_nodes": {"nodes": ["$3"], "destroy_after_deletion": true}}`, kept: []int{1, 2, 4}, orphaned: []int{3}, desired: 4},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := h.sub(t)
			cl := h.agedCluster(fmt.Sprintf("aged-%d", i))
			byIndex := map[int]*model.Node{}
			for _, n := range h.nodes(cl.ID) {
				byIndex[n.Index] = n
			}
			h.policy(fmt.Sprintf("del-%d", i), "senlin.policy.deletion", "1.1", c.policy)
			h.attach(cl, fmt.Sprintf("del-%d", i))
			h.ok(h.act(cl, strings.ReplaceAll(c.body, "$3", byIndex[3].ID)))
			if got := h.indexes(cl.ID); !slices.Equal(got, c.kept) {
				t.Errorf("the cluster kept the nodes with indexes %v, want %v", got, c.kept)
			}
			for idx, n := range byIndex {
				got, err := h.store.GetNode(h.ctx(), n.ID)
				orphan := slices.Contains(c.orphaned, idx)
				switch {
				case orphan && err != nil:
					t.Errorf("node %d: %v, want it kept as an orphan", idx, err)
				case orphan && (got.ClusterID != "" || got.Status != model.NodeActive):
					t.Errorf("node %d is in cluster %q, %s; want an ACTIVE orphan", idx, got.ClusterID, got.Status)
				case !orphan && !slices.Contains(c.kept, idx) && err == nil:
					t.Errorf("node %d still exists (cluster %q), want it deleted", idx, got.ClusterID)
				}
			}
			if got := h.getCluster(cl.ID).DesiredCapacity; got != c.desired {
				t.Errorf("desired_capacity %d, want %d", got, c.desired)
			}
		})
	}
}

// TestScalingPolicySizesScaling checks that the count the built-in scaling
// policy computes is the count the engine scales by, and that a count in
// the request wins over the policy's adjustment.
func TestScalingPolicySizesScaling(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("noop", "grove.noop", map[string]any{})
	cases := []struct {
		name   string
		from   size
		policy string
		body   string
		want   size
	}{
		{"change in capacity", size{2, 2, 0, -1}, `{"event": "CLUSTER_SCALE_OUT", "adjustment": {"type": "CHANGE_IN_CAPACITY", "number": 3}}`,
			`{"scale_out": {}}`, size{5, 5, 0, -1}},
		{"the request's count wins", size{2, 2, 0, -1}, `{"event": "CLUSTER_SCALE_OUT", "adjustment": {"type": "CHANGE_IN_CAPACITY", "number": 3}}`,
			`{"scale_out": {"count": 1}}`, size{3, 3, 0, -1}},
		{"exact capacity", size{2, 2, 0, -1}, `{"event": "CLUSTER_SCALE_OUT", "adjustment": {"type": "EXACT_CAPACITY", "number": 5}}`,
			`{"scale_out": {}}`, size{5, 5, 0, -1}},
		{"percentage in", size{4, 4, 0, -1}, `{"event": "CLUSTER_SCALE_IN", "adjustment": {"type": "CHANGE_IN_PERCENTAGE", "number": 50}}`,
			`{"scale_in": {}}`, size{2, 2, 0, -1}},
		{"percentage raised to min_step", size{4, 4, 0, -1}, `{"event": "CLUSTER_SCALE_IN", "adjustment": {"type": "CHANGE_IN_PERCENTAGE", "number": 10, "min_step": 3}}`,
			`{"scale_in": {}}`, size{1, 1, 0, -1}},
		{"best effort stops at max", size{3, 3, 0, 4}, `{"event": "CLUSTER_SCALE_OUT", "adjustment": {"number": 3, "best_effort": true}}`,
			`{"scale_out": {}}`, size{4, 4, 0, 4}},
		{"best effort stops at min", size{3, 3, 2, -1}, `{"event": "CLUSTER_SCALE_IN", "adjustment": {"number": 3, "best_effort": true}}`,
			`{"scale_in": {}}`, size{2, 2, 2, -1}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := h.sub(t)
			cl := h.noopCluster(fmt.Sprintf("scaled-%d", i), c.from.nodes, c.from.min, c.from.max)
			h.policy(fmt.Sprintf("scaling-%d", i), "senlin.policy.scaling", "1.0", c.policy)
			h.attach(cl, fmt.Sprintf("scaling-%d", i))
			h.ok(h.act(cl, c.body))
			h.assertSize(cl.ID, c.want)
		})
	}
}

// TestScalingPolicyRefusals checks that the built-in scaling policy's
// refusals fail the action with the policy's reason and change nothing: a
// scaling inside the cooldown of the last one (on the engine's clock), and
// a scaling past the cluster's bounds.
func TestScalingPolicyRefusals(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("noop", "grove.noop", map[string]any{})

	t.Run("cooldown", func(t *testing.T) {
		h := h.sub(t)
		cl := h.noopCluster("cool", 1, 0, -1)
		pol := h.policy("cool", "senlin.policy.scaling", "1.0", `{"event": "CLUSTER_SCALE_OUT", "adjustment": {"cooldown": 60}}`)
		h.attach(cl, "cool")
		h.ok(h.act(cl, `{"scale_out": {}}`))
		h.clock.advance(59 * time.Second)
		before := h.snap(cl.ID)
		end := h.wait(h.act(cl, `{"scale_out": {}}`))
		want := fmt.Sprintf("Policy check failure: Failed policy 'cool': Policy %s cooldown is still in progress.", pol.ID)
		if end.Status != model.ActionFailed || end.StatusReason != want {
			t.Errorf("a scale-out 59s after the last ended %s %q, want FAILED %q", end.Action, end.StatusReason, want)
		}
		if after := h.snap(cl.ID); !after.equal(before) {
			t.Errorf("the refused scale-out changed the cluster:\nbefore %v\nafter  %v", before, after)
		}
		// The refusal did not restart the cooldown: a second later it is over.
		h.clock.advance(time.Second)
		h.ok(h.act(cl, `{"scale_out": {}}`))
		h.assertSize(cl.ID, size{3, 3, 0, -1})
	})

	t.Run("below min", func(t *testing.T) {
		h := h.sub(t)
		cl := h.noopCluster("floor", 2, 2, -1)
		h.policy("floor", "senlin.policy.scaling", "1.0", `{"event": "CLUSTER_SCALE_IN"}`)
		h.attach(cl, "floor")
		before := h.snap(cl.ID)
		end := h.wait(h.act(cl, `{"scale_in": {}}`))
		want := "Policy check failure: Failed policy 'floor': The target capacity (1) is less than the cluster's min_size (2)."
		if end.Status != model.ActionFailed || end.StatusReason != want {
			t.Errorf("a scale-in below min_size ended %s %q, want FAILED %q", end.Status, end.StatusReason, want)
		}
		if after := h.snap(cl.ID); !after.equal(before) {
			t.Errorf("the refused scale-in changed the cluster:\nbefore %v\nafter  %v", before, after)
		}
	})
}
