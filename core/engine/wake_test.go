package engine_test

import (
	"context"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// TestForkedChildrenStartAtOnce: the node actions a stage forks are run as
// soon as the stage commits, not at the workers' next poll. With a poll of
// an hour, a cluster's creation and a scale-out can only end within the
// harness's deadline if committing the stage woke the node workers.
func TestForkedChildrenStartAtOnce(t *testing.T) {
	h := newIdleHarness(t, nil)
	h.eng = h.newEngine("", func(c *engine.Config) { c.Poll = time.Hour })
	if err := h.eng.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { h.eng.Stop() })
	h.profile("p")
	cl := h.cluster("prompt", 3, 60)
	h.ok(h.act(cl, `{"scale_out": {"count": 2}}`))
	if n := len(h.nodes(cl.ID)); n != 5 {
		t.Fatalf("%d nodes after the scale-out; want 5", n)
	}
	for _, n := range h.nodes(cl.ID) {
		if n.Status != model.NodeActive {
			t.Errorf("node %s is %s", n.Name, n.Status)
		}
	}
}
