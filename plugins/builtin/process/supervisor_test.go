//go:build linux

package process

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/plugins/sdk"
)

// TestMain lets the test binary stand in for grove as the supervisor (and
// the old per-node wrapper), which the driver starts as its own executable.
func TestMain(m *testing.M) {
	if len(os.Args) > 1 {
		switch os.Args[1] {
		case SupervisorCommand:
			os.Exit(RunSupervisor(os.Args[2:]))
		case WrapCommand:
			os.Exit(RunWrapper(os.Args[2:]))
		}
	}
	os.Exit(m.Run())
}

// supervisorsUnder lists the supervisors whose directory is root (so only
// this test's).
func supervisorsUnder(root string) []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		raw, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		argv := strings.Split(string(raw), "\x00")
		if len(argv) > 2 && argv[1] == SupervisorCommand && argv[2] == root {
			if _, z := procStat(pid); !z {
				out = append(out, pid)
			}
		}
	}
	return out
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func sleepSpec(cmd ...any) sdk.Spec {
	if len(cmd) == 0 {
		cmd = []any{"sleep", "300"}
	}
	return sdk.Spec{Type: TypeName, Version: "1.0", Properties: map[string]any{"command": cmd, "stop_timeout": 2}}
}

func testNodes(n int) []sdk.Node {
	out := make([]sdk.Node, n)
	for i := range out {
		out[i] = sdk.Node{ID: fmt.Sprintf("n%d", i), Name: fmt.Sprintf("node-%d", i), ClusterName: "c", Index: i + 1, Data: map[string]any{"port": 20000 + i}}
	}
	return out
}

// withState gives nodes the state their creation returned, as the engine
// stores it.
func withState(nodes []sdk.Node, res []sdk.Result) []sdk.Node {
	out := make([]sdk.Node, len(nodes))
	for i, n := range nodes {
		n.State, n.PhysicalID = res[i].State, res[i].PhysicalID
		out[i] = n
	}
	return out
}

func pidOf(t *testing.T, n sdk.Node) int {
	var st state
	if err := json.Unmarshal(n.State, &st); err != nil {
		t.Fatal(err)
	}
	return st.PID
}

// TestSupervisor: one supervisor starts every node of a data directory and
// is their parent; a node's exit is recorded with its status and streamed
// to Watch; a missing binary fails the creation at once; deleting stops the
// process group.
func TestSupervisor(t *testing.T) {
	root := t.TempDir()
	d := &Driver{Dir: root}
	t.Cleanup(func() { killAll(root, nil) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan sdk.NodeEvent, 16)
	go d.Watch(ctx, func(ev sdk.NodeEvent) { events <- ev })

	nodes := testNodes(3)
	res := d.Create(ctx, sleepSpec(), nodes)
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create: %v", r.Err)
		}
	}
	nodes = withState(nodes, res)
	sups := supervisorsUnder(root)
	if len(sups) != 1 {
		t.Fatalf("supervisors for %s: %v, want one", root, sups)
	}
	for _, n := range nodes {
		f, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pidOf(t, n)))
		s := string(f)
		fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
		if fields[1] != strconv.Itoa(sups[0]) {
			t.Errorf("node %s: parent %s, want the supervisor %d", n.ID, fields[1], sups[0])
		}
	}
	for _, r := range d.Check(ctx, sleepSpec(), nodes) {
		if !r.Healthy {
			t.Errorf("check %s: %s", r.ID, r.Reason)
		}
	}

	// A node's process is killed: the check and the event say how.
	_ = syscall.Kill(pidOf(t, nodes[0]), syscall.SIGKILL)
	select {
	case ev := <-events:
		if ev.NodeID != nodes[0].ID || ev.Reason != "process exited: killed by signal killed" {
			t.Errorf("event: %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no exit event")
	}
	r := d.Check(ctx, sleepSpec(), nodes[:1])[0]
	if r.Healthy || r.Reason != "process exited: killed by signal killed" {
		t.Errorf("check of the killed node: %v %q", r.Healthy, r.Reason)
	}

	// A node that exits 3 and one that exits 0.
	more := []sdk.Node{{ID: "three", Name: "three", Data: map[string]any{"port": 1}}, {ID: "zero", Name: "zero", Data: map[string]any{"port": 2}}}
	r3 := d.Create(ctx, sleepSpec("sh", "-c", "exit 3"), more[:1])[0]
	r0 := d.Create(ctx, sleepSpec("true"), more[1:])[0]
	if r3.Err != nil || r0.Err != nil {
		t.Fatalf("create: %v %v", r3.Err, r0.Err)
	}
	more = withState(more, []sdk.Result{r3, r0})
	waitFor(t, "both to exit", func() bool {
		rs := d.Check(ctx, sleepSpec(), more)
		return !rs[0].Healthy && !rs[1].Healthy
	})
	rs := d.Check(ctx, sleepSpec(), more)
	if rs[0].Reason != "process exited: status 3" || rs[0].Completed {
		t.Errorf("exit 3: %q completed=%v", rs[0].Reason, rs[0].Completed)
	}
	if rs[1].Reason != "process exited: status 0" || !rs[1].Completed {
		t.Errorf("exit 0: %q completed=%v", rs[1].Reason, rs[1].Completed)
	}

	// A missing binary fails the creation itself.
	bad := d.Create(ctx, sleepSpec("no-such-binary-grove-test"), []sdk.Node{{ID: "bad", Name: "bad", Data: map[string]any{"port": 3}}})[0]
	if bad.Err == nil || !strings.Contains(bad.Err.Error(), "executable file not found") {
		t.Errorf("create of a missing binary: %v", bad.Err)
	}

	// Delete stops the rest.
	for _, r := range d.Delete(ctx, sleepSpec(), nodes[1:]) {
		if r.Err != nil {
			t.Errorf("delete: %v", r.Err)
		}
	}
	for _, n := range nodes[1:] {
		if alive(state{PID: pidOf(t, n)}) {
			t.Errorf("node %s still runs after delete", n.ID)
		}
		if _, err := os.Stat(filepath.Join(root, "nodes", n.ID)); !os.IsNotExist(err) {
			t.Errorf("node %s's directory is left: %v", n.ID, err)
		}
	}
}

// TestSupervisorKilled: the supervisor dies; its nodes keep running, the
// next plugin call starts a new supervisor (a new driver, as after a plugin
// restart, reuses it), and a node that then ends is recorded as ending
// with its status unknown.
func TestSupervisorKilled(t *testing.T) {
	root := t.TempDir()
	d := &Driver{Dir: root}
	var nodePIDs []int
	t.Cleanup(func() { killAll(root, nodePIDs) })
	ctx := context.Background()
	nodes := testNodes(2)
	res := d.Create(ctx, sleepSpec(), nodes)
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("create: %v", r.Err)
		}
	}
	nodes = withState(nodes, res)
	for _, n := range nodes {
		nodePIDs = append(nodePIDs, pidOf(t, n))
	}
	old := supervisorsUnder(root)
	if len(old) != 1 {
		t.Fatalf("supervisors: %v", old)
	}
	_ = syscall.Kill(old[0], syscall.SIGKILL)
	// Gone (this test process, its parent, reaps it): only then are its
	// files (the socket, the lock) surely closed. Its leader thread shows
	// as a zombie while other threads may still hold them.
	waitFor(t, "the supervisor to die", func() bool { t, _ := procStat(old[0]); return t == 0 })
	for _, pid := range nodePIDs {
		if !alive(state{PID: pid}) {
			t.Fatalf("node process %d died with its supervisor", pid)
		}
	}
	// A restarted plugin: a new driver on the same directory.
	d2 := &Driver{Dir: root}
	for _, r := range d2.Check(ctx, sleepSpec(), nodes) {
		if !r.Healthy {
			t.Errorf("check after the supervisor's death: %s", r.Reason)
		}
	}
	sups := supervisorsUnder(root)
	if len(sups) != 1 || sups[0] == old[0] {
		t.Fatalf("supervisors after the check: %v (old %d)", sups, old[0])
	}
	// A second driver finds the same supervisor rather than starting one.
	d3 := &Driver{Dir: root}
	if r := d3.Create(ctx, sleepSpec(), testNodes(3)[2:])[0]; r.Err != nil {
		t.Fatal(r.Err)
	} else {
		nodePIDs = append(nodePIDs, pidOf(t, sdk.Node{State: r.State}))
	}
	if s := supervisorsUnder(root); len(s) != 1 || s[0] != sups[0] {
		t.Errorf("supervisors after a second driver: %v, want %v", s, sups)
	}
	_ = syscall.Kill(nodePIDs[0], syscall.SIGTERM)
	waitFor(t, "the orphaned node's exit to be recorded", func() bool {
		return !d2.Check(ctx, sleepSpec(), nodes[:1])[0].Healthy
	})
	if r := d2.Check(ctx, sleepSpec(), nodes[:1])[0]; r.Reason != "process exited: exit status unknown: its supervisor was restarted" {
		t.Errorf("check of a node that ended under the new supervisor: %q", r.Reason)
	}
	if r := d2.Delete(ctx, sleepSpec(), nodes)[1]; r.Err != nil || alive(state{PID: nodePIDs[1]}) {
		t.Errorf("delete of an orphaned node: %v", r.Err)
	}
}

// TestWrapperNodeStillWorks: a node created by the per-node wrapper of an
// earlier version is checked and deleted as before.
func TestWrapperNodeStillWorks(t *testing.T) {
	root := t.TempDir()
	d := &Driver{Dir: root}
	dir := filepath.Join(root, "nodes", "old")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], WrapCommand, dir, "--", "sleep", "300")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	ticks, _ := startTicks(cmd.Process.Pid)
	b, _ := json.Marshal(state{PID: cmd.Process.Pid, StartTicks: ticks, Dir: dir})
	n := sdk.Node{ID: "old", Name: "old", State: b}
	ctx := context.Background()
	if r := d.Check(ctx, sleepSpec(), []sdk.Node{n})[0]; !r.Healthy {
		t.Fatalf("check of a wrapper node: %s", r.Reason)
	}
	if len(supervisorsUnder(root)) != 0 {
		t.Error("a check of wrapper nodes started a supervisor")
	}
	if r := d.Delete(ctx, sleepSpec(), []sdk.Node{n})[0]; r.Err != nil {
		t.Fatal(r.Err)
	}
	waitFor(t, "the wrapper to exit", func() bool { return cmd.ProcessState != nil || !alive(state{PID: cmd.Process.Pid, StartTicks: ticks}) })
}

// killAll kills this test's supervisors and node processes by pid.
func killAll(root string, pids []int) {
	for _, pid := range supervisorsUnder(root) {
		// Its children first: they are this test's node processes.
		entries, _ := os.ReadDir("/proc")
		for _, e := range entries {
			p, err := strconv.Atoi(e.Name())
			if err != nil {
				continue
			}
			f, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p))
			s := string(f)
			if i := strings.LastIndexByte(s, ')'); i > 0 {
				if fields := strings.Fields(s[i+1:]); len(fields) > 1 && fields[1] == strconv.Itoa(pid) {
					_ = syscall.Kill(p, syscall.SIGKILL)
				}
			}
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// TestSupervisorDeepDir: a data directory deeper than a unix socket address
// allows (108 bytes) still gets its supervisor.
func TestSupervisorDeepDir(t *testing.T) {
	root := filepath.Join(t.TempDir(), strings.Repeat("d", 60), strings.Repeat("e", 60))
	d := &Driver{Dir: root}
	t.Cleanup(func() { killAll(root, nil) })
	ctx := context.Background()
	nodes := testNodes(1)
	r := d.Create(ctx, sleepSpec(), nodes)[0]
	if r.Err != nil {
		t.Fatalf("create under %s: %v", root, r.Err)
	}
	nodes = withState(nodes, []sdk.Result{r})
	if c := d.Check(ctx, sleepSpec(), nodes)[0]; !c.Healthy {
		t.Fatalf("check: %s", c.Reason)
	}
	if del := d.Delete(ctx, sleepSpec(), nodes)[0]; del.Err != nil {
		t.Fatal(del.Err)
	}
}

// TestWatchAfterPluginRestart: a plugin started after the supervisor (a
// restarted plugin) hears the exits of nodes an earlier plugin created.
func TestWatchAfterPluginRestart(t *testing.T) {
	root := t.TempDir()
	t.Cleanup(func() { killAll(root, nil) })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	nodes := testNodes(1)
	r := (&Driver{Dir: root}).Create(ctx, sleepSpec(), nodes)[0]
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	d2 := &Driver{Dir: root}
	events := make(chan sdk.NodeEvent, 4)
	go d2.Watch(ctx, func(ev sdk.NodeEvent) { events <- ev })
	waitFor(t, "the new plugin to connect", func() bool {
		d2.supMu.Lock()
		defer d2.supMu.Unlock()
		d2.mu.Lock()
		defer d2.mu.Unlock()
		return d2.sup != nil && len(d2.subscribers) == 1
	})
	_ = syscall.Kill(pidOf(t, sdk.Node{State: r.State}), syscall.SIGTERM)
	select {
	case ev := <-events:
		if ev.NodeID != nodes[0].ID || ev.Reason != "process exited: killed by signal terminated" {
			t.Errorf("event: %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the restarted plugin heard no exit")
	}
}

// TestNodeSignalsDefault: a node's process starts with every signal at its
// default disposition and none blocked, whatever the supervisor handles.
// What the environment itself ignores or blocks (this test process's own
// masks, which the supervisor inherits as it is started from here, and
// which exec keeps) is the one exception.
func TestNodeSignalsDefault(t *testing.T) {
	root := t.TempDir()
	d := &Driver{Dir: root}
	t.Cleanup(func() { killAll(root, nil) })
	nodes := testNodes(1)
	r := d.Create(context.Background(), sleepSpec(), nodes)[0]
	if r.Err != nil {
		t.Fatal(r.Err)
	}
	node := signalMasks(t, fmt.Sprintf("/proc/%d/status", pidOf(t, sdk.Node{State: r.State})))
	inherited := signalMasks(t, "/proc/self/status")
	inherited["SigCgt:"] = 0 // exec resets caught signals to their default
	for _, field := range []string{"SigBlk:", "SigIgn:", "SigCgt:"} {
		if extra := node[field] &^ inherited[field]; extra != 0 {
			t.Errorf("node process: %s %016x (beyond the environment's %016x), want none", field, node[field], inherited[field])
		}
	}
}

// signalMasks reads the blocked, ignored and caught signal masks of a
// /proc/PID/status file.
func signalMasks(t *testing.T, path string) map[string]uint64 {
	t.Helper()
	status, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]uint64{}
	for _, line := range strings.Split(string(status), "\n") {
		f := strings.Fields(line)
		if len(f) == 2 && (f[0] == "SigBlk:" || f[0] == "SigIgn:" || f[0] == "SigCgt:") {
			v, err := strconv.ParseUint(f[1], 16, 64)
			if err != nil {
				t.Fatalf("%s: %s %q: %v", path, f[0], f[1], err)
			}
			out[f[0]] = v
		}
	}
	return out
}

// TestAdoptRefusesSupervisor: the supervisor is not a node; adopting it
// would make a node's deletion stop every node's bookkeeper.
func TestAdoptRefusesSupervisor(t *testing.T) {
	root := t.TempDir()
	d := &Driver{Dir: root}
	t.Cleanup(func() { killAll(root, nil) })
	if r := d.Create(context.Background(), sleepSpec(), testNodes(1))[0]; r.Err != nil {
		t.Fatal(r.Err)
	}
	sups := supervisorsUnder(root)
	if len(sups) != 1 {
		t.Fatalf("supervisors: %v", sups)
	}
	_, err := d.Adopt(context.Background(), sdk.AdoptRequest{Type: TypeName, Version: "1.0", Identity: strconv.Itoa(sups[0]), Node: sdk.Node{ID: "a"}, Preview: true})
	if err == nil || !strings.Contains(err.Error(), "supervisor, which cannot be adopted") {
		t.Errorf("adopting the supervisor: %v", err)
	}
}
