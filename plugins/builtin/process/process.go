//go:build linux

package process

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/grovehq/grove/plugins/builtin/internal/props"
	"github.com/grovehq/grove/plugins/sdk"
)

// supported reports nil: local.process runs here.
func supported() error { return nil }

// watcher returns the driver's event stream for the type registration.
func (d *Driver) watcher() func(context.Context, func(sdk.NodeEvent)) error { return d.Watch }

// Driver implements sdk.Profile for local processes.
type Driver struct {
	// Dir overrides the runtime directory (default $GROVE_PLUGIN_DATA_DIR).
	Dir string
	// locks serialises calls on one node: a delete that arrives while a
	// create of the same node is still starting it (the caller's deadline
	// passed) waits for it, instead of missing the process and leaking it.
	locks sync.Map // node id -> *sync.Mutex

	mu          sync.Mutex
	subscribers map[chan sdk.NodeEvent]struct{}

	// supMu guards sup, the connection to the data directory's
	// supervisor (client.go), made on first need.
	supMu sync.Mutex
	sup   *supConn
}

// Watch streams the exits of node processes, as the data directory's
// supervisor reports them to this plugin; the engine then checks the node
// at once instead of at its next round. Exits the supervisor cannot see
// (nodes created by per-node wrappers before it, processes that ended
// while this plugin was not connected) are found by the periodic checks.
func (d *Driver) Watch(ctx context.Context, send func(sdk.NodeEvent)) error {
	// A supervisor that outlived the previous plugin reports to this one
	// from now on; none is started for a watch alone.
	_, _ = d.supervisor(ctx, false)
	ch := make(chan sdk.NodeEvent, 64)
	d.mu.Lock()
	if d.subscribers == nil {
		d.subscribers = map[chan sdk.NodeEvent]struct{}{}
	}
	d.subscribers[ch] = struct{}{}
	d.mu.Unlock()
	defer func() {
		d.mu.Lock()
		delete(d.subscribers, ch)
		d.mu.Unlock()
	}()
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev := <-ch:
			send(ev)
		}
	}
}

func (d *Driver) publish(ev sdk.NodeEvent) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for ch := range d.subscribers {
		select {
		case ch <- ev:
		default: // a slow watcher misses events; the periodic check covers
		}
	}
}

func (d *Driver) lock(id string) func() {
	m, _ := d.locks.LoadOrStore(id, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// state is what the engine stores for each node.
type state struct {
	PID        int    `json:"pid"`
	StartTicks uint64 `json:"start_ticks"`
	Dir        string `json:"dir"`
	// Adopted marks a process Grove did not start (POST /v1/nodes/adopt):
	// it need not lead a process group, so it is signalled alone.
	Adopted bool `json:"adopted,omitempty"`
	// Supervised marks a process started by the data directory's
	// supervisor (supervisor.go), which is its parent; without it the pid
	// is a per-node wrapper's (nodes created before the supervisor), which
	// leads its node's process group and writes its exit file the same way.
	Supervised bool `json:"supervised,omitempty"`
}

// target is what a stop signals: the process group Grove started, or an
// adopted process alone.
func (st state) target() int {
	if st.Adopted {
		return st.PID
	}
	return -st.PID
}

func (d *Driver) root() string {
	if d.Dir != "" {
		return d.Dir
	}
	if dir := os.Getenv("GROVE_PLUGIN_DATA_DIR"); dir != "" {
		return dir
	}
	return filepath.Join(os.TempDir(), "grove-local-process")
}

// nodeDir is a node's runtime directory, named by its id. The id comes
// from the engine, but the directory is removed with everything in it on
// delete, so an id that is not one plain path element ("..", "a/../..") is
// refused rather than trusted.
func (d *Driver) nodeDir(n sdk.Node) (string, error) {
	if !filepath.IsLocal(n.ID) || filepath.Base(n.ID) != n.ID {
		return "", fmt.Errorf("node id %q cannot name a runtime directory: it must be one path element without '..'", n.ID)
	}
	return filepath.Join(d.root(), "nodes", n.ID), nil
}

// Create starts one process per node. It is idempotent per node id: a node
// whose process is already running (recorded in its runtime directory) is
// returned as it is, so a create retried after a crash starts nothing twice.
func (d *Driver) Create(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		out[i] = d.create(ctx, p, n)
	}
	return out
}

func (d *Driver) create(ctx context.Context, p sdk.Spec, n sdk.Node) sdk.Result {
	defer d.lock(n.ID)()
	if err := ctx.Err(); err != nil {
		return sdk.Result{ID: n.ID, Err: sdk.Retryable(err)}
	}
	dir, err := d.nodeDir(n)
	if err != nil {
		return sdk.Result{ID: n.ID, Err: err}
	}
	if st, err := readState(dir); err == nil && alive(st) {
		return d.result(n, st)
	}
	port, err := nodePort(n)
	if err != nil {
		return sdk.Result{ID: n.ID, Err: err}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return sdk.Result{ID: n.ID, Err: fmt.Errorf("create runtime directory: %w", err)}
	}
	os.Remove(filepath.Join(dir, "exit"))
	cmdline := props.Strings(p.Properties["command"])
	workdir, _ := p.Properties["workdir"].(string)
	if workdir == "" {
		workdir = dir
	}
	req := startRequest{Dir: dir, Argv: cmdline, Env: nodeEnv(p, n, port), Workdir: workdir, Log: filepath.Join(dir, "output.log")}
	var resp supResponse
	for attempt := 0; ; attempt++ {
		resp, err = d.startNode(ctx, req)
		if err == nil || attempt > 0 || ctx.Err() != nil {
			break
		}
		// The supervisor went away under the request (it was killed, or it
		// was leaving idle as we connected). It records a process in
		// state.json before it answers, so a start it made is found there
		// instead of being made twice.
		if st, err := readState(dir); err == nil && alive(st) {
			return d.result(n, st)
		}
	}
	if err != nil {
		return sdk.Result{ID: n.ID, Err: sdk.Retryable(err)}
	}
	if resp.Error != "" {
		return sdk.Result{ID: n.ID, Err: fmt.Errorf("start %s: %s", strings.Join(cmdline, " "), resp.Error)}
	}
	return d.result(n, state{PID: resp.PID, StartTicks: resp.Ticks, Dir: dir, Supervised: true})
}

func (d *Driver) result(n sdk.Node, st state) sdk.Result {
	b, _ := json.Marshal(st)
	data := map[string]any{}
	for k, v := range n.Data {
		data[k] = v
	}
	data["pid"] = st.PID
	if port, err := nodePort(n); err == nil {
		data["port"] = port
		data["address"] = fmt.Sprintf("127.0.0.1:%d", port)
	}
	return sdk.Result{ID: n.ID, PhysicalID: fmt.Sprintf("pid-%d", st.PID), State: b, Data: data, Healthy: true}
}

// NodePath is the PATH a node's process gets unless its profile's env sets
// one: the usual system directories, not the agent's own PATH, which may
// name directories of the agent's user.
const NodePath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// nodeEnv is a node's whole environment: PATH, the profile's env and the
// GROVE_NODE_* variables. Nothing of the plugin's (and so the agent's)
// environment is passed on: tokens, cloud credentials and go-plugin's
// cookie are not a node's business.
func nodeEnv(p sdk.Spec, n sdk.Node, port int) []string {
	var env []string
	extra := map[string]string{"PATH": NodePath}
	if m, ok := p.Properties["env"].(map[string]any); ok {
		for k, v := range m {
			extra[k] = fmt.Sprint(v)
		}
	}
	keys := make([]string, 0, len(extra))
	for k := range extra {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+extra[k])
	}
	return append(env,
		"GROVE_NODE_PORT="+strconv.Itoa(port),
		"GROVE_NODE_NAME="+n.Name,
		"GROVE_NODE_ID="+n.ID,
		"GROVE_NODE_INDEX="+strconv.Itoa(n.Index),
		"GROVE_CLUSTER_NAME="+n.ClusterName,
	)
}

// Delete stops each node's process: SIGTERM to its process group, SIGKILL
// after stop_timeout. A node whose process is already gone is deleted.
func (d *Driver) Delete(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	grace := time.Duration(props.Int(p.Properties["stop_timeout"], 10)) * time.Second
	out := make([]sdk.Result, len(nodes))
	type pending struct {
		i  int
		st state
	}
	var running []pending
	for i, n := range nodes {
		defer d.lock(n.ID)()
		out[i] = sdk.Result{ID: n.ID}
		st, ok := d.stateOf(n)
		if ok && alive(st) {
			_ = syscall.Kill(st.target(), syscall.SIGTERM)
			running = append(running, pending{i, st})
		}
	}
	deadline := time.Now().Add(grace)
	for _, r := range running {
		for alive(r.st) && time.Now().Before(deadline) && ctx.Err() == nil {
			time.Sleep(20 * time.Millisecond)
		}
		if alive(r.st) {
			_ = syscall.Kill(r.st.target(), syscall.SIGKILL)
			for j := 0; j < 100 && alive(r.st); j++ {
				time.Sleep(10 * time.Millisecond)
			}
		}
		if alive(r.st) {
			out[r.i].Err = sdk.Retryable(fmt.Errorf("process %d did not exit after SIGKILL", r.st.PID))
		}
	}
	for i, n := range nodes {
		if out[i].Err == nil {
			if dir, err := d.nodeDir(n); err == nil {
				// The supervisor may be writing the exit file of a
				// process just reaped as the directory goes: once more.
				if os.RemoveAll(dir) != nil {
					time.Sleep(20 * time.Millisecond)
					os.RemoveAll(dir)
				}
			}
			d.locks.Delete(n.ID)
		}
	}
	return out
}

// Check reports each node's process as alive or dead, with its exit status.
// A check of supervised nodes also makes sure the supervisor runs (a new
// one is started if it was killed), so exits are recorded again and
// streamed to Watch.
func (d *Driver) Check(ctx context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	ensured := false
	for i, n := range nodes {
		st, ok := d.stateOf(n)
		if ok && st.Supervised && !ensured {
			ensured = true
			_, _ = d.supervisor(ctx, true) // best effort: the check itself needs only /proc
		}
		switch {
		case !ok:
			out[i] = sdk.Result{ID: n.ID, Reason: "the node has no process recorded"}
		case alive(st):
			out[i] = sdk.Result{ID: n.ID, Healthy: true, Reason: fmt.Sprintf("process %d is running", st.PID), PhysicalID: n.PhysicalID, State: n.State}
		default:
			reason := exitReason(st)
			out[i] = sdk.Result{ID: n.ID, Reason: reason, PhysicalID: n.PhysicalID, State: n.State, Completed: strings.HasSuffix(reason, ": status 0")}
		}
	}
	return out
}

// Update restarts each node's process with the new profile; the node keeps
// its id, name and port.
func (d *Driver) Update(ctx context.Context, old, new sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return d.recreate(ctx, old, new, nodes)
}

// Recover recreates dead processes (RECREATE and REBOOT are the same for a
// process).
func (d *Driver) Recover(ctx context.Context, p sdk.Spec, nodes []sdk.Node, op string, _ map[string]any) []sdk.Result {
	switch strings.ToUpper(op) {
	case "", "RECREATE", "REBOOT", "REBUILD":
	default:
		out := make([]sdk.Result, len(nodes))
		for i, n := range nodes {
			out[i] = sdk.Result{ID: n.ID, Err: fmt.Errorf("recover operation %q is not supported by %s; use RECREATE or REBOOT", op, TypeName)}
		}
		return out
	}
	return d.recreate(ctx, p, p, nodes)
}

// Operate runs start, stop or restart. A stopped node keeps its id, name
// and port; start runs its process again with them.
func (d *Driver) Operate(ctx context.Context, p sdk.Spec, nodes []sdk.Node, op string, _ map[string]any) []sdk.Result {
	switch op {
	case "start":
		return d.Create(ctx, p, nodes)
	case "restart":
		return d.recreate(ctx, p, p, nodes)
	case "stop":
		out := d.Delete(ctx, p, nodes)
		for i, n := range nodes {
			if out[i].Err == nil {
				out[i] = sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Reason: "stopped by operation stop"}
			}
		}
		return out
	}
	return failAll(nodes, fmt.Errorf("%s has no operation %q", TypeName, op))
}

// Adopt takes over a running process by its pid: its command line and
// working directory become the profile's properties (its environment is
// not read: it may hold secrets, and the profile's env is the caller's to
// give as overrides). From then on the node is checked by its pid and
// start time, and deleting it stops the process. The plugin itself and
// its parent (the agent) cannot be adopted.
func (d *Driver) Adopt(_ context.Context, req sdk.AdoptRequest) (sdk.Adoption, error) {
	if req.Snapshot {
		return sdk.Adoption{}, errors.New("snapshot: local.process has nothing to snapshot (a process is its command line); adopt without it")
	}
	pid, err := strconv.Atoi(req.Identity)
	if err != nil || pid <= 0 {
		return sdk.Adoption{}, fmt.Errorf("identity must be a process id (a positive integer), got %q", req.Identity)
	}
	if pid == 1 || pid == os.Getpid() || pid == os.Getppid() {
		return sdk.Adoption{}, fmt.Errorf("process %d is init, the plugin or the agent, which cannot be adopted", pid)
	}
	ticks, zombie := procStat(pid)
	if ticks == 0 || zombie {
		return sdk.Adoption{}, fmt.Errorf("no running process has id %d", pid)
	}
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return sdk.Adoption{}, fmt.Errorf("read the command line of process %d: %w", pid, err)
	}
	argv := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
	if len(raw) == 0 || argv[0] == "" {
		return sdk.Adoption{}, fmt.Errorf("process %d has no command line (a kernel thread), so no profile can describe it", pid)
	}
	if len(argv) > 1 && argv[1] == SupervisorCommand {
		return sdk.Adoption{}, fmt.Errorf("process %d is a local.process supervisor, which cannot be adopted: adopt the node processes it started", pid)
	}
	command := make([]any, len(argv))
	for i, a := range argv {
		command[i] = a
	}
	properties := map[string]any{"command": command}
	if wd, err := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid)); err == nil && filepath.IsAbs(wd) {
		properties["workdir"] = wd
	}
	if req.Preview {
		return sdk.Adoption{Properties: properties, Result: sdk.Result{PhysicalID: fmt.Sprintf("pid-%d", pid)}}, nil
	}
	defer d.lock(req.Node.ID)()
	dir, err := d.nodeDir(req.Node)
	if err != nil {
		return sdk.Adoption{}, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return sdk.Adoption{}, fmt.Errorf("create runtime directory: %w", err)
	}
	st := state{PID: pid, StartTicks: ticks, Dir: dir, Adopted: true}
	if err := writeState(dir, st); err != nil {
		return sdk.Adoption{}, err
	}
	return sdk.Adoption{Properties: properties, Result: d.result(req.Node, st)}, nil
}

func failAll(nodes []sdk.Node, err error) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		out[i] = sdk.Result{ID: n.ID, Err: err}
	}
	return out
}

func (d *Driver) recreate(ctx context.Context, old, new sdk.Spec, nodes []sdk.Node) []sdk.Result {
	del := d.Delete(ctx, old, nodes)
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		if del[i].Err != nil {
			out[i] = del[i]
			continue
		}
		out[i] = d.create(ctx, new, n)
	}
	return out
}

func (d *Driver) stateOf(n sdk.Node) (state, bool) {
	var st state
	if len(n.State) > 0 && json.Unmarshal(n.State, &st) == nil && st.PID > 0 {
		return st, true
	}
	// The engine may not have recorded the state yet (a crash right after
	// start); the runtime directory still knows.
	dir, err := d.nodeDir(n)
	if err != nil {
		return st, false
	}
	st, err = readState(dir)
	return st, err == nil
}

func nodePort(n sdk.Node) (int, error) {
	switch v := n.Data["port"].(type) {
	case float64:
		return int(v), nil
	case int:
		return v, nil
	case int64:
		return int(v), nil
	}
	return 0, fmt.Errorf("node %s has no port allocated in its data; local.process needs one", n.Name)
}

func readState(dir string) (state, error) {
	var st state
	b, err := os.ReadFile(filepath.Join(dir, "state.json"))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(b, &st)
}

func writeState(dir string, st state) error {
	b, _ := json.Marshal(st)
	tmp := filepath.Join(dir, "state.json.tmp")
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return fmt.Errorf("write node state: %w", err)
	}
	return os.Rename(tmp, filepath.Join(dir, "state.json"))
}

// alive reports whether the recorded process still runs. The start time
// guards against PID reuse: a different process with the same pid is not
// ours, and is never signalled.
func alive(st state) bool {
	if st.PID <= 0 {
		return false
	}
	ticks, zombie := procStat(st.PID)
	if ticks == 0 || zombie {
		return false
	}
	return st.StartTicks == 0 || ticks == st.StartTicks
}

// zombie reports whether the recorded process has ended and waits to be
// reaped.
func zombie(st state) bool {
	ticks, z := procStat(st.PID)
	return z && (st.StartTicks == 0 || ticks == st.StartTicks)
}

func startTicks(pid int) (uint64, error) {
	t, _ := procStat(pid)
	if t == 0 {
		return 0, errors.New("process not found")
	}
	return t, nil
}

// procStat reads the start time (field 22) and whether the process has
// ended (a zombie, or already being reaped) from /proc/<pid>/stat.
func procStat(pid int) (uint64, bool) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, false
	}
	return parseStat(b)
}

// parseStat is procStat on the file's contents. A process that has ended
// shows state Z until its parent reaps it and, for an instant while the
// parent does, X: both are ended. Taking X for running once made a stop
// report a process that had died on SIGTERM as "did not exit after
// SIGKILL" when the supervisor reaped it between two looks.
func parseStat(b []byte) (uint64, bool) {
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, false
	}
	fields := strings.Fields(s[i+1:])
	if len(fields) < 20 {
		return 0, false
	}
	t, _ := strconv.ParseUint(fields[19], 10, 64)
	switch fields[0] {
	case "Z", "X", "x":
		return t, true
	}
	return t, false
}

func exitReason(st state) string {
	b, err := os.ReadFile(filepath.Join(st.Dir, "exit"))
	// A supervised process that has ended but is not yet reaped (a zombie)
	// is about to get its exit file from the supervisor: wait for it a
	// little rather than report no status.
	for i := 0; err != nil && st.Supervised && i < 50 && zombie(st); i++ {
		time.Sleep(20 * time.Millisecond)
		b, err = os.ReadFile(filepath.Join(st.Dir, "exit"))
	}
	if err != nil {
		return fmt.Sprintf("process %d is gone and left no exit status", st.PID)
	}
	return "process exited: " + strings.TrimSpace(string(b))
}
