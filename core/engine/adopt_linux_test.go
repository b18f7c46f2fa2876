package engine_test

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/internal/proctest"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// sleeper starts a process the test owns and reaps, and stops it at the
// end of the test if it still runs.
func sleeper(t *testing.T) int {
	t.Helper()
	cmd := exec.Command("sleep", "60")
	cmd.Dir = t.TempDir()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-done
	})
	return pid
}

// TestAdoptProcess: a running process is previewed and adopted by its pid
// (Senlin's adopt-preview and adopt): its command line and directory make
// the profile, the node is ACTIVE with the process as its physical
// resource, a check finds it healthy, and deleting the node stops that
// process alone (it leads no process group of Grove's).
func TestAdoptProcess(t *testing.T) {
	h := newHarness(t, nil)
	pid := sleeper(t)
	ident := strconv.Itoa(pid)

	prev, err := h.eng.AdoptPreview(h.ctx(), caller, engine.NodeAdopt{Identity: ident, Type: "local.process-1.0"})
	if err != nil {
		t.Fatal(err)
	}
	props, _ := prev["properties"].(map[string]any)
	cmd, _ := props["command"].([]any)
	if prev["type"] != process.TypeName || prev["version"] != "1.0" || len(cmd) != 2 || cmd[0] != "sleep" || cmd[1] != "60" {
		t.Fatalf("preview: %#v", prev)
	}
	if wd, _ := props["workdir"].(string); !strings.HasPrefix(wd, os.TempDir()) {
		t.Errorf("preview workdir %q, want the process's directory", props["workdir"])
	}

	n, err := h.eng.AdoptNode(h.ctx(), caller, engine.NodeAdopt{Identity: ident, Type: "local.process", Name: "sleepy", Role: "worker",
		Metadata: map[string]any{"k": "v"}, Overrides: map[string]any{"stop_timeout": 1}})
	if err != nil {
		t.Fatal(err)
	}
	if n.Status != model.NodeActive || n.PhysicalID != "pid-"+ident || n.Index != -1 || n.ClusterID != "" || n.Role != "worker" || n.Metadata["k"] != "v" {
		t.Fatalf("adopted node: %+v", n)
	}
	prof, err := h.store.GetProfile(h.ctx(), n.ProfileID)
	if err != nil || prof.Name != "prof-sleepy" || prof.Type != process.TypeName || prof.Properties["stop_timeout"] != float64(1) {
		t.Fatalf("the adopted node's profile: %+v %v", prof, err)
	}
	h.ok(h.eng.NodeAction(h.ctx(), caller, "sleepy", map[string]any{"check": map[string]any{}}))
	if got, _ := h.store.GetNode(h.ctx(), n.ID); got.Status != model.NodeActive {
		t.Errorf("after a check: %s %s", got.Status, got.StatusReason)
	}

	h.ok(h.eng.DeleteNode(h.ctx(), caller, "sleepy", false))
	deadline := time.Now().Add(10 * time.Second)
	for proctest.Live(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the adopted process %d still runs after its node was deleted", pid)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestAdoptRefusals: each adoption that cannot be done is a 400 saying
// why, and nothing is stored.
func TestAdoptRefusals(t *testing.T) {
	h := newHarness(t, nil)
	for _, tc := range []struct {
		req  engine.NodeAdopt
		want string
	}{
		{engine.NodeAdopt{Type: "local.process-1.0"}, "identity is required"},
		{engine.NodeAdopt{Identity: "1", Type: ""}, "type is required"},
		{engine.NodeAdopt{Identity: "1", Type: "acme.cloud.server-1.0"}, "not provided by any plugin"},
		{engine.NodeAdopt{Identity: "abc", Type: "local.process-1.0"}, "must be a process id"},
		{engine.NodeAdopt{Identity: strconv.Itoa(os.Getpid()), Type: "local.process-1.0"}, "cannot be adopted"},
		{engine.NodeAdopt{Identity: "1", Type: "local.process-1.0"}, "cannot be adopted"},
		{engine.NodeAdopt{Identity: "4194304", Type: "local.process-1.0"}, "no running process"},
		{engine.NodeAdopt{Identity: "x", Type: "grove.noop-1.0"}, "cannot adopt existing resources"},
		{engine.NodeAdopt{Identity: strings.Repeat("9", 300), Type: "local.process-1.0"}, "at most 255"},
	} {
		for _, preview := range []bool{true, false} {
			var err error
			if preview {
				_, err = h.eng.AdoptPreview(h.ctx(), caller, tc.req)
			} else {
				_, err = h.eng.AdoptNode(h.ctx(), caller, tc.req)
			}
			if status, _ := engine.HTTPStatus(err); status != 400 || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("%+v (preview %v): %v; want 400 with %q", tc.req, preview, err, tc.want)
			}
		}
	}
	// A project without the local.process grant may not adopt a process.
	other := engine.Caller{User: "u", Project: "ungranted", Role: model.RoleMember}
	if _, err := h.eng.AdoptPreview(h.ctx(), other, engine.NodeAdopt{Identity: strconv.Itoa(sleeper(t)), Type: "local.process-1.0"}); err == nil || !strings.Contains(err.Error(), "has not been granted") {
		t.Errorf("adoption without the grant: %v", err)
	}
	if nodes, _ := h.store.ListNodes(h.ctx(), store.ListOpts{}); len(nodes) != 0 {
		t.Errorf("refused adoptions stored nodes: %d", len(nodes))
	}
}

// TestAdoptOwnedRefused: a process that is already a node's (here one
// adopted before) cannot be previewed or adopted again: two nodes on one
// process would both act on it, and deleting either would kill the
// other's. The refusal is a 409 naming the owner, and stores nothing.
func TestAdoptOwnedRefused(t *testing.T) {
	h := newHarness(t, nil)
	ident := strconv.Itoa(sleeper(t))
	first, err := h.eng.AdoptNode(h.ctx(), caller, engine.NodeAdopt{Identity: ident, Type: "local.process-1.0", Name: "web-01"})
	if err != nil {
		t.Fatal(err)
	}
	_, err = h.eng.AdoptPreview(h.ctx(), caller, engine.NodeAdopt{Identity: ident, Type: "local.process-1.0"})
	if status, _ := engine.HTTPStatus(err); status != 409 || !strings.Contains(err.Error(), "already node web-01 (id "+first.ID+")") {
		t.Errorf("preview of an adopted process: %v; want 409 naming web-01", err)
	}
	_, err = h.eng.AdoptNode(h.ctx(), caller, engine.NodeAdopt{Identity: ident, Type: "local.process-1.0", Name: "stolen"})
	if status, _ := engine.HTTPStatus(err); status != 409 || !strings.Contains(err.Error(), "already node web-01 (id "+first.ID+")") {
		t.Errorf("second adoption: %v; want 409 naming web-01", err)
	}
	other := engine.Caller{User: "u2", Project: "p2", Role: model.RoleMember}
	if err := h.store.PutGrant(h.ctx(), "p2", "local.process"); err != nil {
		t.Fatal(err)
	}
	_, err = h.eng.AdoptNode(h.ctx(), other, engine.NodeAdopt{Identity: ident, Type: "local.process-1.0", Name: "stolen"})
	if status, _ := engine.HTTPStatus(err); status != 409 || !strings.Contains(err.Error(), "another project") || strings.Contains(err.Error(), "web-01") {
		t.Errorf("adoption from another project: %v; want 409 not naming the other project's node", err)
	}
	nodes, _ := h.store.ListNodes(h.ctx(), store.ListOpts{})
	if len(nodes) != 1 || nodes[0].ID != first.ID {
		t.Errorf("after refused adoptions the store holds %d nodes, want only web-01", len(nodes))
	}
}

// TestAdoptConcurrentOnce: adoptions of one process racing each other
// record one node at most, however their checks interleave: the store
// transaction that records the node checks again.
func TestAdoptConcurrentOnce(t *testing.T) {
	h := newHarness(t, nil)
	ident := strconv.Itoa(sleeper(t))
	const n = 8
	errs := make(chan error, n)
	start := make(chan struct{})
	for i := range n {
		go func() {
			<-start
			_, err := h.eng.AdoptNode(h.ctx(), caller, engine.NodeAdopt{Identity: ident, Type: "local.process-1.0", Name: "racer-" + strconv.Itoa(i)})
			errs <- err
		}()
	}
	close(start)
	won := 0
	for range n {
		err := <-errs
		if err == nil {
			won++
			continue
		}
		if status, _ := engine.HTTPStatus(err); status != 409 {
			t.Errorf("a losing adoption: %v; want 409", err)
		}
	}
	nodes, _ := h.store.ListNodes(h.ctx(), store.ListOpts{})
	if won != 1 || len(nodes) != 1 {
		t.Errorf("%d of %d concurrent adoptions succeeded and %d nodes are stored; want 1 and 1", won, n, len(nodes))
	}
}
