package engine_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/google/uuid"

	"github.com/grovehq/grove/core/model"
)

// legacyEntry is one action of testdata/legacy_actions.json, as the engine
// stored it before inputs were typed.
type legacyEntry struct {
	Kind   string         `json:"kind"`
	Action string         `json:"action"`
	Inputs map[string]any `json:"inputs"`
	Data   map[string]any `json:"data"`
}

// legacyAction returns the fixture's action of a kind with the fixture's ids
// of objects replaced by the ids of this test's objects.
func legacyAction(t *testing.T, kind string, ids map[string]string) legacyEntry {
	t.Helper()
	b, err := os.ReadFile("testdata/legacy_actions.json")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		IDs     map[string]string `json:"ids"`
		Actions []json.RawMessage `json:"actions"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		t.Fatal(err)
	}
	for _, raw := range f.Actions {
		s := string(raw)
		for name, id := range ids {
			s = strings.ReplaceAll(s, f.IDs[name], id)
		}
		var e legacyEntry
		if err := json.Unmarshal([]byte(s), &e); err != nil {
			t.Fatal(err)
		}
		if e.Kind == kind {
			return e
		}
	}
	t.Fatalf("the fixture has no %q", kind)
	return legacyEntry{}
}

// insert stores a READY action with the fixture's inputs and the keys of
// its data given, as an engine before the upgrade left it, and waits for
// the engine to end it.
func (h *harness) insert(e legacyEntry, clusterID, target string, keep ...string) *model.Action {
	h.t.Helper()
	id := uuid.NewString()
	data := map[string]any{}
	for _, k := range keep {
		data[k] = e.Data[k]
	}
	a := &model.Action{ID: id, Name: "legacy_" + id[:8], ClusterID: clusterID, Target: target, Action: e.Action, Cause: model.CauseRPC,
		Status: model.ActionReady, StatusReason: "The action is ready to run.", Timeout: 60, Inputs: e.Inputs, Outputs: map[string]any{},
		Data: data, User: caller.User, Project: caller.Project}
	if err := h.store.CreateActions(h.ctx(), []*model.Action{a}); err != nil {
		h.t.Fatal(err)
	}
	end := h.wait(a, nil)
	if end.Status != model.ActionSucceeded {
		h.t.Fatalf("the stored %s (%s) ended %s: %s", e.Action, e.Kind, end.Status, end.StatusReason)
	}
	return end
}

// TestLegacyActionsResume: actions stored by the engine before inputs were
// typed (testdata/legacy_actions.json) run to success on the typed engine,
// with the effect their request asked for.
func TestLegacyActionsResume(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")

	t.Run("resize with the client's strings", func(t *testing.T) {
		// adjustment CHANGE_IN_CAPACITY, number "-1", min_size "1", strict "true"
		cl := h.cluster("resize", 2, 60)
		h.insert(legacyAction(t, "cluster resize strings", nil), cl.ID, cl.ID)
		got := h.getCluster(cl.ID)
		if n := len(h.nodes(cl.ID)); n != 1 || got.DesiredCapacity != 1 || got.MinSize != 1 {
			t.Fatalf("after the resize: %d nodes, desired %d, min %d; want 1, 1, 1", n, got.DesiredCapacity, got.MinSize)
		}
	})

	t.Run("update resumed from its stored size plan", func(t *testing.T) {
		// inputs size {min_size 1, max_size 10}; data.plan desired 3, min 1,
		// max 10, nothing to create or remove
		cl := h.cluster("update", 3, 60)
		e := legacyAction(t, "cluster update bounds only", nil)
		if e.Data["plan"] == nil {
			t.Fatal("the fixture's update has no plan")
		}
		h.insert(e, cl.ID, cl.ID, "plan")
		got := h.getCluster(cl.ID)
		if n := len(h.nodes(cl.ID)); n != 3 || got.DesiredCapacity != 3 || got.MinSize != 1 || got.MaxSize != 10 || got.Status != model.ClusterActive {
			t.Fatalf("after the update: %d nodes, desired %d, min %d, max %d, %s", n, got.DesiredCapacity, got.MinSize, got.MaxSize, got.Status)
		}
	})

	t.Run("scale-out", func(t *testing.T) {
		cl := h.cluster("scale", 1, 60)
		h.insert(legacyAction(t, "cluster scale-out", nil), cl.ID, cl.ID)
		if n := len(h.nodes(cl.ID)); n != 3 {
			t.Fatalf("after scaling out by 2: %d nodes", n)
		}
	})

	t.Run("recover with check_capacity as a string", func(t *testing.T) {
		cl := h.cluster("recover", 2, 60)
		victim := h.nodes(cl.ID)[0]
		if err := h.store.DeleteNodes(h.ctx(), []string{victim.ID}); err != nil {
			t.Fatal(err)
		}
		// check true, check_capacity "true": the lost node is made again.
		h.insert(legacyAction(t, "cluster recover", nil), cl.ID, cl.ID)
		if n := len(h.nodes(cl.ID)); n != 2 {
			t.Fatalf("after recovery with check_capacity: %d nodes, want 2", n)
		}
	})

	t.Run("node recover with check as a string", func(t *testing.T) {
		n := h.orphan("lone")
		if err := h.store.SetNodeStatus(h.ctx(), []string{n.ID}, model.NodeError, "Broken by the test."); err != nil {
			t.Fatal(err)
		}
		// check "false": recovered without a check first.
		h.insert(legacyAction(t, "node recover", map[string]string{"node_spare": n.ID}), "", n.ID)
		got, err := h.store.GetNode(h.ctx(), n.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != model.NodeActive {
			t.Fatalf("node after recovery: %s %s", got.Status, got.StatusReason)
		}
	})

	t.Run("policy attach", func(t *testing.T) {
		cl := h.cluster("attach", 1, 60)
		spec := map[string]any{"type": "test.hold", "version": "1.0", "properties": map[string]any{}}
		pol, err := h.eng.CreatePolicy(h.ctx(), caller, "hold", spec)
		if err != nil {
			t.Fatal(err)
		}
		h.insert(legacyAction(t, "cluster policy attach", map[string]string{"policy": pol.ID}), cl.ID, cl.ID)
		b, err := h.store.GetBinding(h.ctx(), cl.ID, pol.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !b.Enabled || b.Priority != 30 {
			t.Fatalf("binding enabled %v priority %d, want true 30", b.Enabled, b.Priority)
		}
	})
}

// TestRecoverParametersAreTyped: recover parameters that have no typed
// value are refused at submit, naming the field, instead of being stored as
// sent and ignored.
func TestRecoverParametersAreTyped(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	n := h.orphan("lone")
	for _, c := range []struct {
		params map[string]any
		want   string
	}{
		{map[string]any{"operation_params": "fast"}, "recover.operation_params must be an object."},
		{map[string]any{"delete_timeout": "soon"}, "recover.delete_timeout must be a non-negative integer"},
		{map[string]any{"check": "maybe"}, "recover.check must be a boolean."},
	} {
		_, err := h.eng.NodeAction(h.ctx(), caller, n.ID, map[string]any{"recover": c.params})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("recover %v: %v, want %q", c.params, err, c.want)
		}
	}
	a, err := h.eng.NodeAction(h.ctx(), caller, n.ID, map[string]any{"recover": map[string]any{"delete_timeout": "30", "check": "true"}})
	end := h.wait(a, err)
	if end.Inputs["delete_timeout"] != 30.0 || end.Inputs["check"] != true {
		t.Fatalf("stored inputs %v: numbers and booleans sent as strings are stored as values", end.Inputs)
	}
}
