// Package e2e runs a real grove agent process with its real plugin
// processes and drives it through the REST API, as users do.
package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/proctest"
	"github.com/grovehq/grove/internal/testbin"
)

var groveBin string

// runRoot is this run's own temporary directory: TestMain points TMPDIR at
// it, so every t.TempDir, and with it every agent's data dir, lies under it.
// local.process starts each node's process from a supervisor whose argv
// names the plugin's data directory in the agent's data dir (before it, a
// per-node wrapper naming the node's runtime directory), so the helpers
// that find or kill node processes tell this run's from a concurrent test
// run's or a user's cluster of the same name by that path, not by anything
// in the processes' environment (nodes start from a clean environment).
var runRoot string

func TestMain(m *testing.M) {
	root, err := os.MkdirTemp("", "grove-e2e-run")
	if err != nil {
		panic(err)
	}
	if runRoot, err = filepath.EvalSymlinks(root); err != nil {
		panic(err)
	}
	// Others may pass through, not list: the throwaway PostgreSQL runs as
	// the postgres user when the tests run as root.
	if err := os.Chmod(runRoot, 0o711); err != nil {
		panic(err)
	}
	os.Setenv("TMPDIR", runRoot)
	code := run(m)
	killRunProcesses()
	os.RemoveAll(runRoot)
	os.Exit(code)
}

// killRunProcesses kills, at the end of the run, every node process this
// run started that a test's own clean-up left behind (node processes are
// meant to outlive their agent, so stopping an agent does not end them):
// the supervisors (and wrappers) whose directory lies under runRoot and
// what they started, found by that path and nothing a user's process could
// share.
func killRunProcesses() {
	var ours []int
	for _, pid := range pids() {
		if !isZombie(pid) && ourHelper(pid) {
			ours = append(ours, pid)
		}
	}
	for _, pid := range ours {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		alive := false
		for _, pid := range ours {
			if proctest.Live(pid) {
				alive = true
			}
		}
		if !alive {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "grove-e2e-bin")
	if err != nil {
		panic(err)
	}
	groveBin = filepath.Join(dir, "grove")
	if err := testbin.Build(groveBin, ".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	return m.Run()
}

// agentProc is a running `grove agent` process.
type agentProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	addr    string
	dataDir string
	log     *os.File
	client  *api.Client
	// token is the bootstrap token of an agent started without -dev.
	token string
}

var listenRE = regexp.MustCompile(`listening on (https?://127\.0\.0\.1:\d+)`)

// agentOptions say how startAgentWith runs an agent; the zero value is
// startAgent's dev agent.
type agentOptions struct {
	// secure runs the agent without -dev, as production does: every request
	// needs a token (extra must name a -config file, as grove agent asks).
	// The agent's client then carries the bootstrap token, which the agent
	// wrote before it printed its address.
	secure bool
	// env is added to the agent's environment only, not to the test's:
	// the test's own client reads GROVE_TOKEN, for one.
	env []string
}

// startAgent starts `grove agent -dev` on a free port with dataDir, and
// waits until it has printed its address. extra are more flags.
func startAgent(t *testing.T, dataDir string, extra ...string) *agentProc {
	t.Helper()
	return startAgentWith(t, agentOptions{}, dataDir, extra...)
}

// startAgentWith is startAgent with options.
func startAgentWith(t *testing.T, opts agentOptions, dataDir string, extra ...string) *agentProc {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(dataDir, "agent-test.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"agent", "-bind", "127.0.0.1:0", "-data-dir", dataDir, "-log-level", "debug"}
	if !opts.secure {
		args = append(args, "-dev")
	}
	args = append(args, extra...)
	cmd := exec.Command(groveBin, args...)
	if len(opts.env) > 0 {
		cmd.Env = append(os.Environ(), opts.env...)
	}
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	a := &agentProc{t: t, cmd: cmd, dataDir: dataDir, log: logf}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case a.addr = <-found:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("agent did not start; log:\n%s", a.logText())
	}
	a.client = api.NewClient(a.addr)
	t.Cleanup(func() { a.stop() })
	t.Cleanup(func() { a.keepLog() })
	if opts.secure {
		b, err := os.ReadFile(filepath.Join(dataDir, "bootstrap-token"))
		if err != nil {
			t.Fatalf("the agent started without -dev wrote no bootstrap token: %v; log:\n%s", err, a.logText())
		}
		a.token = strings.TrimSpace(string(b))
		a.client = api.New(api.Options{Address: a.addr, Token: a.token})
	}
	return a
}

// keepLog copies a failed test's agent log into $GROVE_E2E_KEEP_LOGS, when
// it is set, before the test's temporary directory goes: a failure seen
// only under load (CI's parallel runs) can then be read whole.
func (a *agentProc) keepLog() {
	dir := os.Getenv("GROVE_E2E_KEEP_LOGS")
	if dir == "" || !a.t.Failed() {
		return
	}
	name := strings.NewReplacer("/", "_", " ", "_").Replace(a.t.Name())
	dst := filepath.Join(dir, fmt.Sprintf("%s-%d-%s.log", name, os.Getpid(), filepath.Base(a.dataDir)))
	if err := os.MkdirAll(dir, 0o755); err == nil {
		err = os.WriteFile(dst, []byte(a.logText()), 0o644)
		if err == nil {
			a.t.Logf("agent log kept in %s", dst)
			return
		}
	}
	a.t.Logf("could not keep the agent log in %s", dir)
}

func (a *agentProc) logText() string {
	b, _ := os.ReadFile(a.log.Name())
	return string(b)
}

// stop interrupts the agent and waits for it.
func (a *agentProc) stop() {
	if a.cmd.ProcessState != nil {
		return
	}
	_ = a.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		a.cmd.Process.Kill()
		<-done
	}
	a.log.Close()
}

// kill SIGKILLs the agent, as a crash would.
func (a *agentProc) kill() {
	_ = a.cmd.Process.Kill()
	_ = a.cmd.Wait()
	a.log.Close()
}

// eventually polls cond until it returns true or the deadline passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	last := ""
	for {
		ok, info := cond()
		if ok {
			return
		}
		last = info
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", d, what, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func (a *agentProc) do(method, path string, body any) (*api.Response, error) {
	return a.client.Do(context.Background(), method, path, nil, body, nil)
}

func (a *agentProc) mustDo(method, path string, body any, out any) *api.Response {
	a.t.Helper()
	r, err := a.client.Do(context.Background(), method, path, nil, body, out)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	return r
}

// waitAction waits for an action and fails the test unless it succeeded.
func (a *agentProc) waitAction(id string) *api.Action {
	a.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	act, err := a.client.WaitAction(ctx, id, nil)
	if err != nil {
		a.t.Fatalf("action %s: %v\nagent log tail:\n%s", id, err, tail(a.logText(), 40))
	}
	return act
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

func (a *agentProc) createProfile(name string, props map[string]any) {
	a.t.Helper()
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": name,
		"spec": map[string]any{"type": "local.process", "version": "1.0", "properties": props}}}, nil)
}

// webProfile is a local.process profile whose nodes serve HTTP with grove's
// own demo server.
func (a *agentProc) webProfile(name string) {
	a.createProfile(name, map[string]any{"command": []any{groveBin, "demo-http"}, "stop_timeout": 5})
}

func (a *agentProc) createCluster(name, profile string, desired int, extra map[string]any) string {
	a.t.Helper()
	body := map[string]any{"name": name, "profile_id": profile, "desired_capacity": desired}
	for k, v := range extra {
		body[k] = v
	}
	r := a.mustDo(http.MethodPost, "/v1/clusters", map[string]any{"cluster": body}, nil)
	return r.ActionID()
}

func (a *agentProc) clusterAction(cluster, name string, params map[string]any) string {
	a.t.Helper()
	id, err := a.client.ClusterAction(context.Background(), cluster, name, params)
	if err != nil {
		a.t.Fatalf("%s on %s: %v", name, cluster, err)
	}
	return id
}

func (a *agentProc) cluster(name string) *api.Cluster {
	a.t.Helper()
	c, err := a.client.GetCluster(context.Background(), name)
	if err != nil {
		a.t.Fatalf("get cluster %s: %v", name, err)
	}
	return c
}

func (a *agentProc) nodes(cluster string) []api.Node {
	a.t.Helper()
	ns, err := a.client.ListNodes(context.Background(), map[string][]string{"cluster_id": {cluster}, "sort": {"index"}})
	if err != nil {
		a.t.Fatalf("list nodes: %v", err)
	}
	return ns
}

// httpGet fetches a node's page.
func httpGet(addr string) (string, error) {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return string(b), err
}

// nodeAnswers waits until a node's HTTP server answers with its name.
func nodeAnswers(t *testing.T, n api.Node) {
	t.Helper()
	addr, _ := n.Data["address"].(string)
	if addr == "" {
		t.Fatalf("node %s has no address in its data: %v", n.Name, n.Data)
	}
	eventually(t, 10*time.Second, "node "+n.Name+" to answer HTTP on "+addr, func() (bool, string) {
		body, err := httpGet(addr)
		if err != nil {
			return false, err.Error()
		}
		return strings.Contains(body, "hello from "+n.Name), body
	})
}

// processesOf lists the pids of this run's node processes of the cluster
// (the node commands and what they started, not their wrappers).
func processesOf(cluster string) []int { return clusterProcesses(cluster, false) }

// clusterProcesses lists the live processes of this test run whose
// environment says they belong to the cluster, with or without
// local.process's wrappers. A process is this run's when it is a helper
// whose runtime directory lies under runRoot, or descends from one. A
// cluster's name alone is not enough: a user or another test run may have a
// cluster of that name on this machine.
func clusterProcesses(cluster string, wrappers bool) []int {
	var out []int
	for _, pid := range pids() {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil || isZombie(pid) || !slices.Contains(strings.Split(string(env), "\x00"), "GROVE_CLUSTER_NAME="+cluster) {
			continue
		}
		if isWrapper(pid) && !wrappers {
			continue
		}
		if ourHelper(pid) {
			out = append(out, pid)
		}
	}
	return out
}

// isWrapper reports whether pid runs a local.process helper (a per-node
// wrapper; the supervisor has no node's environment, so it is never taken
// for a cluster's process).
func isWrapper(pid int) bool { return proctest.HelperDir(cmdline(pid)) != "" }

// ourHelper reports whether pid, or one of its ancestors, is a
// local.process helper for a directory under runRoot: the supervisor of a
// plugin data directory (the parent of every node process it started), or
// the per-node wrapper of earlier versions.
func ourHelper(pid int) bool {
	dir := helperDir(pid)
	return dir != "" && strings.HasPrefix(dir, runRoot+string(filepath.Separator))
}

// helperDir is the directory named by the local.process helper (supervisor
// or wrapper) that pid is or descends from, or "" when there is none. A
// node process whose supervisor was killed is reparented away from it and
// has none.
func helperDir(pid int) string {
	for range 32 {
		if dir := proctest.HelperDir(cmdline(pid)); dir != "" {
			return dir
		}
		ppid := proctest.PPID(pid)
		if ppid <= 1 {
			return ""
		}
		pid = ppid
	}
	return ""
}

// cmdline returns a process's argv, or nil when it is gone.
func cmdline(pid int) []string { return proctest.Cmdline(pid) }

// killProcessesOf kills leftover node processes of a cluster, and their
// wrappers, at test end, and waits for them to be gone: a wrapper still
// recording its child's exit would race the removal of the test's
// directories.
func killProcessesOf(cluster string) {
	var killed []int
	kill := func() {
		for _, pid := range clusterProcesses(cluster, true) {
			syscall.Kill(pid, syscall.SIGKILL)
			killed = append(killed, pid)
		}
	}
	kill()
	// Wait for the very processes signalled, not only until none is found
	// again: a node whose supervisor is gone is no longer found as this
	// run's, yet may still be dying (SIGKILL is delivered asynchronously).
	dying := func() bool {
		for _, pid := range killed {
			if proctest.Live(pid) {
				return true
			}
		}
		return len(clusterProcesses(cluster, true)) > 0
	}
	// The test's agent usually still runs here (its clean-up comes later),
	// and a restart policy may start replacements at once, reported by the
	// supervisor the moment a node dies: kill those too, until none has
	// appeared for a while.
	var quiet time.Time
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		kill()
		switch {
		case dying():
			quiet = time.Time{}
		case quiet.IsZero():
			quiet = time.Now()
		case time.Since(quiet) > 300*time.Millisecond:
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// isZombie reports whether pid has ended and waits to be reaped.
func isZombie(pid int) bool {
	f := proctest.Stat(pid)
	return len(f) > 0 && f[0] == "Z"
}

// pids lists the processes in /proc.
func pids() []int { return proctest.PIDs() }

// TestProcessHelpersTouchOnlyThisRun: the helpers that count and kill a
// cluster's node processes leave alone processes of the same cluster name
// that this run did not start (a user's own node, another test run's node,
// a directory whose name only begins like this run's), and still find and
// kill this run's node and its wrapper. Every process here has exactly the
// clean environment a node gets, so nothing but its wrapper's directory
// can tell them apart.
func TestProcessHelpersTouchOnlyThisRun(t *testing.T) {
	const cluster = "helpers-web"
	env := []string{"PATH=/usr/bin:/bin", "GROVE_CLUSTER_NAME=" + cluster}
	start := func(dir string) *exec.Cmd {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(groveBin, "__process-wrap", dir, "--", "sleep", "300")
		cmd.Env = env
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	outside := func(name string) string {
		dir, err := os.MkdirTemp(filepath.Dir(runRoot), name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return filepath.Join(dir, "plugins", "builtin", "nodes", "n1")
	}
	users := start(outside("grove-user"))
	otherRun := start(outside("grove-e2e-run"))
	lookalike := start(filepath.Join(runRoot+"-lookalike", "nodes", "n1"))
	t.Cleanup(func() { os.RemoveAll(runRoot + "-lookalike") })
	bare := exec.Command("sleep", "300")
	bare.Env = env
	if err := bare.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { bare.Process.Kill(); bare.Wait() })
	ours := start(filepath.Join(t.TempDir(), "plugins", "builtin", "nodes", "n1"))
	exited := make(chan struct{})
	go func() { ours.Process.Wait(); close(exited) }()

	var node int
	eventually(t, 5*time.Second, "this run's node process to be found", func() (bool, string) {
		got := processesOf(cluster)
		if len(got) != 1 {
			return false, fmt.Sprint(got)
		}
		node = got[0]
		parent := proctest.PPID(node)
		return parent == ours.Process.Pid, fmt.Sprintf("%v, parent %d", got, parent)
	})
	killProcessesOf(cluster)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("killProcessesOf left this run's wrapper running")
	}
	if proctest.Live(node) {
		t.Errorf("killProcessesOf left this run's node process %d running", node)
	}
	for name, cmd := range map[string]*exec.Cmd{"a user's node": users, "another run's node": otherRun,
		"a node under a directory named like this run's": lookalike, "a process without a wrapper": bare} {
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil || isZombie(cmd.Process.Pid) {
			t.Errorf("killProcessesOf killed %s (pid %d): %v", name, cmd.Process.Pid, err)
		}
	}
}

// startSupervised starts a local.process supervisor by hand for the plugin
// data directory root, as a plugin would, and has it start `sleep 300`
// with env as node n1; it returns the supervisor and the node's pid. Both
// are killed at the test's end.
func startSupervised(t *testing.T, root string, env []string) (*exec.Cmd, int) {
	t.Helper()
	node := filepath.Join(root, "nodes", "n1")
	if err := os.MkdirAll(node, 0o755); err != nil {
		t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	sup := exec.Command(groveBin, "__process-supervisor", root)
	sup.ExtraFiles = []*os.File{w}
	sup.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := sup.Start(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	t.Cleanup(func() { sup.Process.Kill(); sup.Wait() })
	if line, _ := bufio.NewReader(r).ReadString('\n'); strings.TrimSpace(line) != "ok" {
		t.Fatalf("supervisor of %s: %q", root, line)
	}
	// Through the directory's fd: the socket's path may be longer than a
	// socket address allows (108 bytes), as the plugin does too.
	d, err := os.Open(root)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	conn, err := net.Dial("unix", fmt.Sprintf("/proc/self/fd/%d/supervisor.sock", d.Fd()))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	req := map[string]any{"id": 1, "start": map[string]any{"dir": node, "argv": []string{"sleep", "300"}, "env": env, "workdir": node, "log": filepath.Join(node, "output.log")}}
	if err := json.NewEncoder(conn).Encode(req); err != nil {
		t.Fatal(err)
	}
	var resp struct {
		PID   int    `json:"pid"`
		Error string `json:"error"`
	}
	if err := json.NewDecoder(conn).Decode(&resp); err != nil || resp.PID <= 0 {
		t.Fatalf("start through the supervisor of %s: %+v %v", root, resp, err)
	}
	t.Cleanup(func() { syscall.Kill(resp.PID, syscall.SIGKILL) })
	return sup, resp.PID
}

// TestProcessHelpersTouchOnlyThisRunSupervised is
// TestProcessHelpersTouchOnlyThisRun for nodes started by a supervisor:
// only the node of this run's supervisor is found and killed, not the
// node of a user's or another run's supervisor, nor of one whose
// directory only begins like this run's; the supervisors themselves (no
// node's environment) are never taken for a cluster's process.
func TestProcessHelpersTouchOnlyThisRunSupervised(t *testing.T) {
	const cluster = "helpers-sup"
	env := []string{"PATH=/usr/bin:/bin", "GROVE_CLUSTER_NAME=" + cluster}
	outside := func(name string) string {
		dir, err := os.MkdirTemp(filepath.Dir(runRoot), name)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		return filepath.Join(dir, "plugins", "builtin")
	}
	_, users := startSupervised(t, outside("grove-user"), env)
	_, otherRun := startSupervised(t, outside("grove-e2e-run"), env)
	t.Cleanup(func() { os.RemoveAll(runRoot + "-lookalike") })
	_, lookalike := startSupervised(t, filepath.Join(runRoot+"-lookalike", "plugins", "builtin"), env)
	sup, ours := startSupervised(t, filepath.Join(t.TempDir(), "plugins", "builtin"), env)

	eventually(t, 5*time.Second, "this run's node process to be found", func() (bool, string) {
		got := processesOf(cluster)
		return len(got) == 1 && got[0] == ours, fmt.Sprint(got)
	})
	if got := clusterProcesses(cluster, true); len(got) != 1 || got[0] != ours {
		t.Errorf("with helpers: %v, want only the node %d (a supervisor has no node's environment)", got, ours)
	}
	killProcessesOf(cluster)
	if proctest.Live(ours) {
		t.Errorf("killProcessesOf left this run's node process %d running", ours)
	}
	if !proctest.Live(sup.Process.Pid) {
		t.Errorf("killProcessesOf killed the supervisor")
	}
	for name, pid := range map[string]int{"a user's node": users, "another run's node": otherRun, "a node under a directory named like this run's": lookalike} {
		if !proctest.Live(pid) {
			t.Errorf("killProcessesOf killed %s (pid %d)", name, pid)
		}
	}
}
