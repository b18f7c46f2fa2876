package engine_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// hookSink is a lifecycle hook's URL: it keeps what it is sent.
type hookSink struct {
	url  string
	msgs chan map[string]any
}

func newHookSink(t *testing.T) *hookSink {
	s := &hookSink{msgs: make(chan map[string]any, 10)}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var m map[string]any
		if err := json.NewDecoder(r.Body).Decode(&m); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		s.msgs <- m
	}))
	t.Cleanup(srv.Close)
	s.url = srv.URL + "/hook"
	return s
}

func (s *hookSink) next(t *testing.T) map[string]any {
	t.Helper()
	select {
	case m := <-s.msgs:
		return m
	case <-time.After(20 * time.Second):
		t.Fatal("the lifecycle hook was not told within 20s")
		return nil
	}
}

// hookedCluster is a cluster of three grove.noop nodes with a deletion
// policy (oldest first) whose webhook hook is sink, with the timeout given.
func hookedCluster(h *harness, sink *hookSink, timeout int) *model.Cluster {
	h.t.Helper()
	h.profileOf("noop", "grove.noop", map[string]any{})
	cl := h.noopCluster("c", 3, 0, -1)
	pol := h.policy("hooked", "senlin.policy.deletion", "1.1", `{"criteria": "OLDEST_FIRST", "hooks": {"type": "webhook", "params": {"url": "`+sink.url+`"}, "timeout": `+
		strconv.Itoa(timeout)+`}}`)
	h.attach(cl, pol.ID)
	return cl
}

// TestLifecycleHookHoldsDeletion: a scale-in under a deletion policy with a
// webhook hook tells the hook of the node it removes (Senlin's message:
// the token, the node, its physical id, termination), holds the node's
// deletion in WAITING_LIFECYCLE_COMPLETION with the node still there, and
// deletes it once complete_lifecycle names the token; a token no action
// has is refused, and one already completed is a conflict.
func TestLifecycleHookHoldsDeletion(t *testing.T) {
	h := newHarness(t, nil)
	sink := newHookSink(t)
	cl := hookedCluster(h, sink, 0)
	oldest := h.nodes(cl.ID)[0]
	a, err := h.act(cl, `{"scale_in": {"count": 1}}`)
	if err != nil {
		t.Fatal(err)
	}
	m := sink.next(t)
	token, _ := m["lifecycle_action_token"].(string)
	if m["node_id"] != oldest.ID || m["resource_id"] != oldest.PhysicalID || m["lifecycle_transition_type"] != "termination" || m["cluster_id"] != cl.ID {
		t.Errorf("the hook's message %v, want the oldest node %s (%s), termination", m, oldest.ID, oldest.PhysicalID)
	}
	held := h.getAction(token)
	if held.Status != model.ActionWaitingLifecycle || held.Cause != model.CauseDerivedLifecycle || held.Target != oldest.ID || held.ParentID != a.ID {
		t.Fatalf("the held action: %s %s on %s, child of %s", held.Status, held.Cause, held.Target, held.ParentID)
	}
	if got := h.getAction(a.ID); got.Status != model.ActionRunning {
		t.Errorf("the scale-in is %s while the hook holds its node, want RUNNING", got.Status)
	}
	if len(h.nodes(cl.ID)) != 3 {
		t.Errorf("the held node was removed before its lifecycle completed")
	}
	var e *engine.Error
	if _, err := h.act(cl, `{"complete_lifecycle": {"lifecycle_action_token": "no-such-action"}}`); !errors.As(err, &e) || e.Status != 400 ||
		!strings.Contains(e.Message, "lifecycle_action_token") {
		t.Errorf("an unknown token: %v", err)
	}
	done, err := h.act(cl, `{"complete_lifecycle": {"lifecycle_action_token": "`+token+`"}}`)
	if err != nil || done.ID != token {
		t.Fatalf("complete_lifecycle: %v, %v", done, err)
	}
	if end := h.wait(a, nil); end.Status != model.ActionSucceeded {
		t.Fatalf("the scale-in: %s %s", end.Status, end.StatusReason)
	}
	for _, n := range h.nodes(cl.ID) {
		if n.ID == oldest.ID {
			t.Errorf("the completed node is still in the cluster")
		}
	}
	if len(h.nodes(cl.ID)) != 2 {
		t.Errorf("%d nodes after the scale-in, want 2", len(h.nodes(cl.ID)))
	}
	if _, err := h.act(cl, `{"complete_lifecycle": {"lifecycle_action_token": "`+token+`"}}`); !errors.As(err, &e) || e.Status != 409 {
		t.Errorf("a token completed twice: %v", err)
	}
	// Nodes the user names are removed without the hook, as in Senlin.
	victim := h.nodes(cl.ID)[0]
	h.ok(h.act(cl, `{"del_nodes": {"nodes": ["`+victim.ID+`"]}}`))
	select {
	case m := <-sink.msgs:
		t.Errorf("the hook was told of a node the user named: %v", m)
	default:
	}
}

// TestLifecycleHookTimesOut: a held deletion nobody completes goes on when
// the hook's timeout has passed, with a warning event.
func TestLifecycleHookTimesOut(t *testing.T) {
	h := newHarness(t, nil)
	sink := newHookSink(t)
	cl := hookedCluster(h, sink, 5)
	a, err := h.act(cl, `{"scale_in": {"count": 1}}`)
	if err != nil {
		t.Fatal(err)
	}
	token, _ := sink.next(t)["lifecycle_action_token"].(string)
	if got := h.getAction(token); got.Status != model.ActionWaitingLifecycle {
		t.Fatalf("the held action is %s", got.Status)
	}
	h.clock.advance(6 * time.Second)
	if end := h.wait(a, nil); end.Status != model.ActionSucceeded {
		t.Fatalf("the scale-in: %s %s", end.Status, end.StatusReason)
	}
	if got := h.getAction(token); got.Status != model.ActionSucceeded {
		t.Errorf("the released deletion is %s %s", got.Status, got.StatusReason)
	}
	if len(h.nodes(cl.ID)) != 2 {
		t.Errorf("%d nodes after the scale-in, want 2", len(h.nodes(cl.ID)))
	}
}
