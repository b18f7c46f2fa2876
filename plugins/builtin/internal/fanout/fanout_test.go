package fanout_test

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/grovehq/grove/plugins/builtin/internal/fanout"
	sdk "github.com/grovehq/grove/plugins/sdk"
)

func nodes(ids ...string) []sdk.Node {
	out := make([]sdk.Node, len(ids))
	for i, id := range ids {
		out[i] = sdk.Node{ID: id, PhysicalID: "old-" + id, State: []byte("s-" + id), Data: map[string]any{"vm": "old-" + id, "keep": id}}
	}
	return out
}

// TestEachKeepsOrderAndBound: results come back in the nodes' order however
// the calls finish, and no more than the bound run at once.
func TestEachKeepsOrderAndBound(t *testing.T) {
	var running, most atomic.Int32
	release := make(chan struct{})
	ns := nodes("a", "b", "c", "d", "e", "f")
	done := make(chan []sdk.Result)
	go func() {
		done <- fanout.Each(ns, 2, func(n sdk.Node) sdk.Result {
			now := running.Add(1)
			for {
				m := most.Load()
				if now <= m || most.CompareAndSwap(m, now) {
					break
				}
			}
			<-release
			running.Add(-1)
			return sdk.Result{ID: n.ID, PhysicalID: "new-" + n.ID}
		})
	}()
	// Two calls start and wait; then each is let go in turn.
	deadline := time.Now().Add(10 * time.Second)
	for running.Load() < 2 {
		if time.Now().After(deadline) {
			t.Fatal("no two calls started within 10s")
		}
		runtime.Gosched()
	}
	for range ns {
		release <- struct{}{}
	}
	out := <-done
	for i, r := range out {
		if r.ID != ns[i].ID || r.PhysicalID != "new-"+ns[i].ID {
			t.Errorf("result %d is %+v, want node %s's", i, r, ns[i].ID)
		}
	}
	if m := most.Load(); m > 2 {
		t.Errorf("%d calls ran at once, want at most 2", m)
	}
}

// TestFailAllRetryableWhenCut: a batch failed while its context is live
// keeps its error; one failed after the context was cut is retryable.
func TestFailAllRetryableWhenCut(t *testing.T) {
	boom := errors.New("boom")
	out := fanout.FailAll(t.Context(), nodes("a"), boom)
	if out[0].ID != "a" || out[0].PhysicalID != "old-a" || !errors.Is(out[0].Err, boom) || sdk.IsRetryable(out[0].Err) {
		t.Errorf("live context: %+v, want node a failed with boom, not retryable", out[0])
	}
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	out = fanout.FailAll(ctx, nodes("a"), boom)
	if !errors.Is(out[0].Err, boom) || !sdk.IsRetryable(out[0].Err) {
		t.Errorf("cut context: %v, want boom made retryable", out[0].Err)
	}
}

// TestReplace: nodes whose delete went through are created again without
// their old physical id, state and resource key (the rest of their data
// kept, the caller's maps untouched); a failed delete keeps its failure.
func TestReplace(t *testing.T) {
	ns := nodes("a", "b", "c")
	gone := []sdk.Result{{ID: "a"}, {ID: "b", Err: errors.New("b is stuck")}, {ID: "c"}}
	var asked []sdk.Node
	out := fanout.Replace(ns, gone, "vm", func(batch []sdk.Node) []sdk.Result {
		asked = batch
		res := make([]sdk.Result, len(batch))
		for i, n := range batch {
			res[i] = sdk.Result{ID: n.ID, PhysicalID: "new-" + n.ID}
		}
		return res
	})
	if len(asked) != 2 || asked[0].ID != "a" || asked[1].ID != "c" {
		t.Fatalf("created again %+v, want a and c", asked)
	}
	for _, n := range asked {
		if n.PhysicalID != "" || n.State != nil || n.Data["vm"] != nil || n.Data["keep"] != n.ID {
			t.Errorf("node %s was passed as %+v, want no physical id, state or vm, and keep", n.ID, n)
		}
	}
	if ns[0].Data["vm"] != "old-a" {
		t.Error("Replace changed the caller's data")
	}
	if out[0].PhysicalID != "new-a" || out[2].PhysicalID != "new-c" || out[1].Err == nil || out[1].Err.Error() != "b is stuck" {
		t.Errorf("results %+v, want a and c new and b's delete failure", out)
	}
}
