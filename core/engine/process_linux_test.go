package engine_test

import (
	"maps"
	"os"
	"slices"
	"sync"
	"syscall"
	"testing"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/internal/proctest"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// TestMain lets the test binary stand in for grove as local.process's
// supervisor (and the per-node wrapper of earlier versions), which the
// driver starts as its own executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 && os.Args[1] == process.SupervisorCommand {
		os.Exit(process.RunSupervisor(os.Args[2:]))
	}
	if len(os.Args) > 1 && os.Args[1] == process.WrapCommand {
		os.Exit(process.RunWrapper(os.Args[2:]))
	}
	code := m.Run()
	killRunWrappers()
	os.Exit(code)
}

// killRunWrappers kills, at the end of the run, the local.process
// supervisors (and wrappers) this test binary started (argv[0] is this very
// binary, built for this run) and their children, which a test's clean-up
// left behind: node processes are meant to outlive their engine.
func killRunWrappers() {
	self, err := os.Executable()
	if err != nil {
		return
	}
	wrappers := map[int]bool{}
	parents := map[int]int{}
	for _, pid := range proctest.PIDs() {
		if pid == os.Getpid() {
			continue
		}
		if argv := proctest.Cmdline(pid); len(argv) > 0 && argv[0] == self && proctest.HelperDir(argv) != "" {
			wrappers[pid] = true
		}
		if ppid := proctest.PPID(pid); ppid != 0 {
			parents[pid] = ppid
		}
	}
	for pid, ppid := range parents {
		if wrappers[pid] || wrappers[ppid] {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	}
}

// TestLocalProcessNodes runs a cluster of built-in local.process nodes
// through the engine: each node is a running process, a scale-out starts
// one more, a scale-in stops the one it removes, and deleting the cluster
// stops them all.
func TestLocalProcessNodes(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("proc", process.TypeName, map[string]any{"command": []any{"sleep", "60"}, "stop_timeout": 0})
	started := map[int]bool{}
	// Whatever happens, stop the processes this test started.
	t.Cleanup(func() { killAll(t, slices.Collect(maps.Keys(started))) })
	seen := func(pids map[string]int) {
		for _, pid := range pids {
			started[pid] = true
		}
	}
	desired := 2
	cl := h.create(engine.ClusterCreate{Name: "procs", Profile: "proc", DesiredCapacity: &desired})
	h.assertSize(cl.ID, size{2, 2, 0, -1})
	first := h.pids(cl.ID)
	seen(first)
	for _, pid := range first {
		if !alive(pid) {
			t.Errorf("the process %d of a created node is not running", pid)
		}
	}

	h.ok(h.act(cl, `{"scale_out": {"count": 1}}`))
	h.assertSize(cl.ID, size{3, 3, 0, -1})
	all := h.pids(cl.ID)
	seen(all)
	h.ok(h.act(cl, `{"check": {}}`))
	h.assertSize(cl.ID, size{3, 3, 0, -1})

	h.ok(h.act(cl, `{"scale_in": {"count": 1}}`))
	h.assertSize(cl.ID, size{2, 2, 0, -1})
	kept := h.pids(cl.ID)
	for id, pid := range all {
		if _, ok := kept[id]; ok {
			if !alive(pid) {
				t.Errorf("the process %d of a node the scale-in kept is not running", pid)
			}
			continue
		}
		h.gone(pid)
	}

	h.ok(h.eng.DeleteCluster(h.ctx(), caller, cl.ID, false))
	if _, err := h.store.GetCluster(h.ctx(), cl.ID); err == nil {
		t.Errorf("the cluster still exists after its deletion")
	}
	pids := make([]int, 0, len(kept))
	for _, pid := range kept {
		pids = append(pids, pid)
	}
	slices.Sort(pids)
	for _, pid := range pids {
		h.gone(pid)
	}
}

// killAtEnd returns a function that notes the process groups of a
// cluster's nodes as the test sees them, and kills those still alive when
// the test ends: node processes started by host engines a test stopped or
// "killed" are nobody's to stop otherwise.
func (h *harness) killAtEnd() func(clusterID string) {
	started := map[int]bool{}
	var mu sync.Mutex
	h.t.Cleanup(func() {
		mu.Lock()
		defer mu.Unlock()
		killAll(h.t, slices.Collect(maps.Keys(started)))
	})
	return func(clusterID string) {
		for _, n := range h.nodes(clusterID) {
			if pid, ok := n.Data["pid"].(float64); ok {
				mu.Lock()
				started[int(pid)] = true
				mu.Unlock()
			}
		}
	}
}
