package engine_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// pollServer answers a health policy's poll URL: "OK" for a node, "sick"
// for the nodes a test marked.
type pollServer struct {
	url  string
	mu   sync.Mutex
	sick map[string]bool
}

func newPollServer(t *testing.T) *pollServer {
	p := &pollServer{sick: map[string]bool{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		defer p.mu.Unlock()
		if p.sick[strings.TrimPrefix(r.URL.Path, "/")] {
			_, _ = w.Write([]byte("sick"))
			return
		}
		_, _ = w.Write([]byte("OK"))
	}))
	t.Cleanup(srv.Close)
	p.url = srv.URL
	return p
}

func (p *pollServer) mark(name string) {
	p.mu.Lock()
	p.sick[name] = true
	p.mu.Unlock()
}

// recoveries lists the NODE_RECOVER actions of a node.
func (h *harness) recoveries(nodeID string) []*model.Action {
	h.t.Helper()
	acts, err := h.store.ListActions(h.ctx(), store.ListOpts{Filters: map[string][]string{"action": {model.NodeRecoverAction}, "target": {nodeID}}})
	if err != nil {
		h.t.Fatal(err)
	}
	return acts
}

// TestHealthPolicyPollsURL: under senlin.policy.health with
// NODE_STATUS_POLL_URL, the health loop polls each node's URL ({nodename}
// replaced): a node whose answer does not match the healthy response
// (after the retries) is found dead although its driver says it runs, and
// recovered with the policy's action and parameters; the cluster is not
// checked again before the policy's interval has passed.
func TestHealthPolicyPollsURL(t *testing.T) {
	h := newHarness(t, nil)
	poll := newPollServer(t)
	h.profileOf("noop", "grove.noop", map[string]any{})
	two := 2
	cl := h.create(engine.ClusterCreate{Name: "c", Profile: "noop", DesiredCapacity: &two,
		Config: map[string]any{"grove.restart": map[string]any{"delay": "0s"}}})
	pol := h.policy("hp", "senlin.policy.health", "1.1", `{"detection": {"interval": 60, "node_update_timeout": 0, "detection_modes": [
		{"type": "NODE_STATUS_POLL_URL", "options": {"poll_url": "`+poll.url+`/{nodename}", "poll_url_healthy_response": "^OK$",
		 "poll_url_retry_limit": 2, "poll_url_retry_interval": 0}}]},
		"recovery": {"actions": [{"name": "RECREATE"}], "node_delete_timeout": 7}}`)
	h.attach(cl, pol.ID)
	nodes := h.nodes(cl.ID)
	poll.mark(nodes[0].Name)
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	recs := h.recoveries(nodes[0].ID)
	if len(recs) != 1 {
		t.Fatalf("%d recoveries of the node whose URL says sick, want 1", len(recs))
	}
	in := recs[0].Inputs
	if in["operation"] != "RECREATE" || in["delete_timeout"] != float64(7) || in["force_recreate"] != false {
		t.Errorf("the recovery's inputs %v, want the policy's RECREATE with delete_timeout 7", in)
	}
	if end := h.wait(recs[0], nil); end.Status != model.ActionSucceeded {
		t.Errorf("the recovery: %s %s", end.Status, end.StatusReason)
	}
	if len(h.recoveries(nodes[1].ID)) != 0 {
		t.Errorf("the healthy node was recovered")
	}
	evs, err := h.store.ListEvents(h.ctx(), store.ListOpts{Filters: map[string][]string{"oid": {nodes[0].ID}, "action": {"HEALTH_CHECK"}}})
	if err != nil || len(evs) == 0 || !strings.Contains(evs[0].StatusReason, "does not match") {
		t.Errorf("the health check's event: %v %v", evs, err)
	}

	// Within the interval the cluster is not checked; after it, it is.
	poll.mark(nodes[1].Name)
	h.clock.advance(30 * time.Second)
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	if n := h.recoveries(nodes[1].ID); len(n) != 0 {
		t.Errorf("the cluster was checked within the policy's interval")
	}
	h.clock.advance(31 * time.Second)
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	if n := h.recoveries(nodes[1].ID); len(n) != 1 {
		t.Errorf("%d recoveries of the second node after the interval, want 1", len(n))
	}
}

// TestHealthPolicyAllFailed: with ALL_FAILED over node status polling and
// the URL, a node whose URL alone fails is left alone.
func TestHealthPolicyAllFailed(t *testing.T) {
	h := newHarness(t, nil)
	poll := newPollServer(t)
	h.profileOf("noop", "grove.noop", map[string]any{})
	cl := h.noopCluster("c", 1, 0, -1)
	pol := h.policy("hp", "senlin.policy.health", "1.2", `{"detection": {"node_update_timeout": 0, "recovery_conditional": "ALL_FAILED", "detection_modes": [
		{"type": "NODE_STATUS_POLLING"},
		{"type": "NODE_STATUS_POLL_URL", "options": {"poll_url": "`+poll.url+`/{nodename}", "poll_url_healthy_response": "OK", "poll_url_retry_limit": 1}}]},
		"recovery": {}}`)
	h.attach(cl, pol.ID)
	n := h.nodes(cl.ID)[0]
	poll.mark(n.Name)
	if err := h.eng.CheckHealth(h.ctx()); err != nil {
		t.Fatal(err)
	}
	got, _ := h.store.GetNode(h.ctx(), n.ID)
	if got.Status != model.NodeActive || len(h.recoveries(n.ID)) != 0 {
		t.Errorf("a node whose URL alone fails under ALL_FAILED: %s %s", got.Status, got.StatusReason)
	}
}
