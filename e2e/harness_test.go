// Package e2e runs a real grove agent process with its real plugin
// processes and drives it through the REST API, as users do.
package e2e

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/testbin"
)

var groveBin string

// runMarkerVar names the environment variable that marks every process this
// test run starts: the agents get it from TestMain's environment and their
// local.process nodes inherit it. The helpers that find or kill node
// processes look for this run's value, so they never touch the processes of
// a concurrent test run or of a user's own cluster with the same name.
const runMarkerVar = "GROVE_TEST_RUN"

// runMarker is this run's value of runMarkerVar, set once by TestMain.
var runMarker string

func TestMain(m *testing.M) {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		panic(err)
	}
	runMarker = hex.EncodeToString(b)
	os.Setenv(runMarkerVar, runMarker)
	dir, err := os.MkdirTemp("", "grove-e2e-bin")
	if err != nil {
		panic(err)
	}
	groveBin = filepath.Join(dir, "grove")
	if err := testbin.Build(groveBin, ".."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// agentProc is a running `grove agent` process.
type agentProc struct {
	t       *testing.T
	cmd     *exec.Cmd
	addr    string
	dataDir string
	log     *os.File
	client  *api.Client
}

var listenRE = regexp.MustCompile(`listening on (https?://127\.0\.0\.1:\d+)`)

// startAgent starts `grove agent` on a free port with dataDir, and waits
// until it has printed its address. extra are more flags.
func startAgent(t *testing.T, dataDir string, extra ...string) *agentProc {
	t.Helper()
	logf, err := os.OpenFile(filepath.Join(dataDir, "agent-test.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	args := append([]string{"agent", "-dev", "-bind", "127.0.0.1:0", "-data-dir", dataDir, "-log-level", "debug"}, extra...)
	cmd := exec.Command(groveBin, args...)
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
	return a
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

// processesOf lists the pids of this run's processes whose environment says
// they are nodes of the cluster (the node commands, not their wrappers).
func processesOf(cluster string) []int { return clusterProcesses(cluster, false) }

// clusterProcesses lists the live processes of this test run (by
// runMarkerVar) whose environment says they belong to the cluster, with or
// without local.process's wrappers. A cluster's name alone is not enough: a
// user or another test run may have a cluster of that name on this machine.
func clusterProcesses(cluster string, wrappers bool) []int {
	var out []int
	for _, pid := range pids() {
		env, err := os.ReadFile(fmt.Sprintf("/proc/%d/environ", pid))
		if err != nil {
			continue
		}
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if (!wrappers && strings.Contains(string(cmdline), "__process-wrap")) || isZombie(pid) {
			continue
		}
		vars := strings.Split(string(env), "\x00")
		if slices.Contains(vars, runMarkerVar+"="+runMarker) && slices.Contains(vars, "GROVE_CLUSTER_NAME="+cluster) {
			out = append(out, pid)
		}
	}
	return out
}

// killProcessesOf kills leftover node processes of a cluster, and their
// wrappers, at test end, and waits for them to be gone: a wrapper still
// recording its child's exit would race the removal of the test's
// directories.
func killProcessesOf(cluster string) {
	for _, pid := range clusterProcesses(cluster, true) {
		syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(10 * time.Second); len(clusterProcesses(cluster, true)) > 0 && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond)
	}
}

// pids lists the processes in /proc.
func pids() []int {
	var out []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		if pid, err := strconv.Atoi(e.Name()); err == nil {
			out = append(out, pid)
		}
	}
	return out
}

// statFields returns the fields of /proc/PID/stat after the command name
// (state first, then the parent's pid), or nil when the process is gone.
func statFields(pid int) []string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return nil
	}
	s := string(b)
	return strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
}

// TestProcessHelpersTouchOnlyThisRun: the helpers that count and kill a
// cluster's node processes leave alone a process of the same cluster name
// that this run did not start (a user's own cluster, another test run's),
// and still find and kill this run's.
func TestProcessHelpersTouchOnlyThisRun(t *testing.T) {
	const cluster = "helpers-web"
	var base []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, runMarkerVar+"=") {
			base = append(base, kv)
		}
	}
	start := func(extra ...string) *exec.Cmd {
		cmd := exec.Command("sleep", "300")
		cmd.Env = append(slices.Clone(base), append(extra, "GROVE_CLUSTER_NAME="+cluster)...)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		return cmd
	}
	users := start()
	otherRun := start(runMarkerVar + "=someone-elses-run")
	ours := start(runMarkerVar + "=" + runMarker)
	exited := make(chan struct{})
	go func() { ours.Process.Wait(); close(exited) }()

	eventually(t, 5*time.Second, "this run's process to be found", func() (bool, string) {
		got := processesOf(cluster)
		return slices.Equal(got, []int{ours.Process.Pid}), fmt.Sprint(got)
	})
	killProcessesOf(cluster)
	select {
	case <-exited:
	case <-time.After(10 * time.Second):
		t.Fatal("killProcessesOf left this run's process running")
	}
	for name, cmd := range map[string]*exec.Cmd{"a process without a run marker": users, "another run's process": otherRun} {
		if err := cmd.Process.Signal(syscall.Signal(0)); err != nil || isZombie(cmd.Process.Pid) {
			t.Errorf("killProcessesOf killed %s (pid %d): %v", name, cmd.Process.Pid, err)
		}
	}
}
