package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// grove runs the CLI against the agent and returns stdout, stderr and the
// exit code.
func (a *agentProc) grove(args ...string) (string, string, int) {
	return a.groveEnv(nil, args...)
}

// groveEnv is grove with more environment variables (KEY=VALUE), which win
// over the test's own.
func (a *agentProc) groveEnv(env []string, args ...string) (string, string, int) {
	cmd := exec.Command(groveBin, args...)
	cmd.Env = append(append(os.Environ(), "GROVE_ADDR="+a.addr), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		a.t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestCLI(t *testing.T) {
	a := startAgent(t, t.TempDir())
	t.Cleanup(func() { killProcessesOf("cli") })
	spec := filepath.Join(t.TempDir(), "web.yaml")
	os.WriteFile(spec, []byte("type: local.process\nversion: \"1.0\"\nproperties:\n  command: [\""+groveBin+"\", \"demo-http\"]\n"), 0o644)

	out, errOut, code := a.grove("profile", "create", "-spec-file", spec, "web")
	if code != 0 || !strings.Contains(out, "Profile web created") {
		t.Fatalf("profile create: %d %s %s", code, out, errOut)
	}
	out, errOut, code = a.grove("cluster", "create", "-profile", "web", "-desired-capacity", "2", "-config", "node.name.format=cli-$1I", "-wait", "cli")
	if code != 0 || !strings.Contains(out, "Cluster creation succeeded") {
		t.Fatalf("cluster create -wait: %d %s %s", code, out, errOut)
	}
	if !strings.Contains(errOut, "SUCCEEDED") {
		t.Errorf("-wait shows progress on stderr: %q", errOut)
	}
	out, _, code = a.grove("node", "list", "-cluster_id", "cli")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.HasPrefix(lines[0], "ID") || !strings.Contains(lines[1], "cli-1") || !strings.Contains(lines[2], "cli-2") {
		t.Fatalf("node list table:\n%s", out)
	}
	out, _, code = a.grove("cluster", "list", "-json")
	var clusters []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &clusters) != nil || len(clusters) != 1 || clusters[0]["status"] != "ACTIVE" {
		t.Fatalf("cluster list -json: %s", out)
	}
	out, _, code = a.grove("cluster", "resize", "-adjustment", "1", "-wait", "cli")
	if code != 0 || a.cluster("cli").DesiredCapacity != 3 {
		t.Fatalf("cluster resize: %d %s", code, out)
	}
	out, _, code = a.grove("cluster", "show", "cli")
	if code != 0 || !strings.Contains(out, "desired_capacity: 3") {
		t.Fatalf("cluster show:\n%s", out)
	}

	// The cluster filters take its name: events and actions of "cli" are
	// found, and only its; -object-name narrows events to one node.
	cliID := a.cluster("cli").ID
	for _, args := range [][]string{{"event", "list", "-cluster", "cli", "-json"}, {"action", "list", "-cluster", "cli", "-json"}, {"event", "list", "-cluster_id", "cli", "-json"}} {
		out, errOut, code := a.grove(args...)
		var items []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &items) != nil || len(items) == 0 {
			t.Fatalf("grove %v: %d %s %s", args, code, out, errOut)
		}
		for _, it := range items {
			if it["cluster_id"] != cliID {
				t.Errorf("grove %v lists %v of cluster %v", args, it["id"], it["cluster_id"])
			}
		}
		if deprecated := args[2] == "-cluster_id"; deprecated != strings.Contains(errOut, "-cluster_id is deprecated") {
			t.Errorf("grove %v: stderr %q", args, errOut)
		}
	}
	out, _, code = a.grove("event", "list", "-object-name", "cli-1", "-json")
	var named []map[string]any
	if code != 0 || json.Unmarshal([]byte(out), &named) != nil || len(named) == 0 {
		t.Fatalf("event list -object-name cli-1: %d %s", code, out)
	}
	node1, err := a.client.GetNode(context.Background(), "cli-1")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range named {
		if e["oid"] != node1.ID {
			t.Errorf("event list -object-name cli-1 lists an event of %v (%v), not of node %s", e["oid"], e["oname"], node1.ID)
		}
	}

	// Errors: one sentence with the API's reason, exit 1; usage errors exit 2.
	_, errOut, code = a.grove("cluster", "resize", "-capacity", "-4", "cli")
	if code != 1 || !strings.HasPrefix(errOut, "Error: The request was refused: ") || !strings.Contains(errOut, "non-negative") {
		t.Fatalf("refused resize: %d %q", code, errOut)
	}
	_, errOut, code = a.grove("cluster", "show", "ghost")
	if code != 1 || !strings.Contains(errOut, "The cluster 'ghost' could not be found.") {
		t.Fatalf("missing cluster: %d %q", code, errOut)
	}
	_, errOut, code = a.grove("cluster", "explode")
	if code != 2 || !strings.Contains(errOut, "not a cluster subcommand") {
		t.Fatalf("unknown subcommand: %d %q", code, errOut)
	}
	cmd := exec.Command(groveBin, "cluster", "list", "-address", "127.0.0.1:1")
	b, _ := cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 1 || !strings.Contains(string(b), "Cannot reach the Grove agent at http://127.0.0.1:1") {
		t.Fatalf("unreachable agent: %s", b)
	}

	out, _, code = a.grove("plugin", "list")
	if code != 0 || !strings.Contains(out, "builtin") || !strings.Contains(out, "running") {
		t.Fatalf("plugin list:\n%s", out)
	}
	out, _, code = a.grove("cluster", "delete", "-wait", "cli")
	if code != 0 || !strings.Contains(out, "Cluster deletion succeeded") {
		t.Fatalf("cluster delete: %d %s", code, out)
	}
}

// TestDescribe prints the built-in plugin's description without serving.
func TestDescribe(t *testing.T) {
	out, err := exec.Command(groveBin, "plugin", "describe").Output()
	if err != nil {
		t.Fatal(err)
	}
	var d struct {
		Name       string `json:"name"`
		Components []struct {
			Kind string `json:"kind"`
			Type string `json:"type"`
		} `json:"components"`
	}
	if err := json.Unmarshal(out, &d); err != nil || d.Name != "builtin" {
		t.Fatalf("describe: %v %s", err, out)
	}
	var got []string
	for _, c := range d.Components {
		got = append(got, c.Kind+" "+c.Type)
	}
	want := []string{"profile local.process", "profile grove.noop", "profile container.docker", "profile vsphere.vm", "profile os.nova.server",
		"policy senlin.policy.deletion", "policy senlin.policy.scaling", "policy senlin.policy.affinity", "policy senlin.policy.batch",
		"policy senlin.policy.zone_placement", "policy senlin.policy.region_placement", "policy senlin.policy.health", "policy grove.policy.haproxy", "policy senlin.policy.loadbalance", "policy grove.policy.placement"}
	if !slices.Equal(got, want) {
		t.Errorf("describe lists %q, want %q", got, want)
	}
}

// TestCLICompletion: the binary answers the shell's completion requests
// (COMP_LINE, as bash's `complete -C grove grove` that -autocomplete-install
// writes sends them) with commands, subcommands and a command's flags.
func TestCLICompletion(t *testing.T) {
	cases := []struct{ line, want string }{
		{"grove clu", "cluster"},
		{"grove cluster cr", "create"},
		{"grove cluster create -pro", "-profile"},
		{"grove event list -obj", "-object-name"},
	}
	for _, tc := range cases {
		cmd := exec.Command(groveBin)
		cmd.Env = append(os.Environ(), "COMP_LINE="+tc.line, "COMP_POINT="+strconv.Itoa(len(tc.line)))
		out, err := cmd.Output()
		if err != nil || !slices.Contains(strings.Fields(string(out)), tc.want) {
			t.Errorf("completing %q: %v %q; want %q among them", tc.line, err, out, tc.want)
		}
	}
}

// syncBuffer is a buffer a process writes while the test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

var doneRE = regexp.MustCompile(`(\d+)/(\d+) nodes done`)

// TestCLIWaitProgressInterruptAndPaging: off a terminal -wait prints a line
// each time the action's progress changes (the step, nodes done of total,
// elapsed), not one unchanging line; Ctrl-C stops the wait with exit 130 and
// the command to follow the action, which goes on and is followed by that
// very command; action and event lists are newest first, a page at a time,
// and print the command for the next page.
func TestCLIWaitProgressInterruptAndPaging(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", slowConfig(t, dir))
	noopProfile(a, "slow", 150)

	out, errOut, code := a.grove("cluster", "create", "-profile", "slow", "-desired-capacity", "8", "-wait", "-health-watch", "0s", "prog")
	if code != 0 || !strings.Contains(out, "Creating cluster prog: done (Cluster creation succeeded.)") {
		t.Fatalf("cluster create -wait: %d %s %s", code, out, errOut)
	}
	lines := strings.Split(strings.TrimSpace(errOut), "\n")
	counts := map[string]bool{}
	for _, l := range lines {
		if !strings.HasPrefix(l, "Creating cluster prog: ") || !strings.HasSuffix(l, ")") {
			t.Errorf("progress line %q is not `Creating cluster prog: ... (elapsed)`", l)
		}
		if m := doneRE.FindStringSubmatch(l); m != nil {
			counts[m[1]] = true
			if m[2] != "8" {
				t.Errorf("progress line %q counts %s nodes, want 8", l, m[2])
			}
		}
	}
	if len(counts) < 3 || !strings.Contains(errOut, "creating nodes") || !strings.Contains(lines[len(lines)-1], "SUCCEEDED, 8/8 nodes done") {
		t.Errorf("-wait off a terminal shows the nodes done as they are created, then the end:\n%s", errOut)
	}
	if strings.Contains(errOut, "\r") {
		t.Errorf("-wait off a terminal redraws lines: %q", errOut)
	}

	// On a terminal (util-linux's script gives the CLI one) the status
	// line is redrawn in place as the nodes are created.
	actions := 9 + 31 // prog's creation and intr's below, with their nodes'
	if scriptBin, err := exec.LookPath("script"); err == nil {
		cmd := exec.Command(scriptBin, "-qec", groveBin+" cluster create -profile slow -desired-capacity 5 -wait -health-watch 0s term", "/dev/null")
		cmd.Env = append(os.Environ(), "GROVE_ADDR="+a.addr)
		b, err := cmd.Output()
		screen := string(b)
		redraws := strings.Split(screen, "\r\033[K")
		if err != nil || len(redraws) < 4 || !strings.Contains(screen, "\r\033[KCreating cluster term: creating nodes, ") ||
			!strings.Contains(screen, "\r\033[KCreating cluster term: SUCCEEDED, 5/5 nodes done (") {
			t.Fatalf("cluster create -wait on a terminal: %v\n%q", err, screen)
		}
		for _, r := range redraws[1 : len(redraws)-1] {
			if strings.Contains(r, "\n") {
				t.Errorf("a redraw %q ends its line: the status is not redrawn in place", r)
			}
		}
		actions += 6
	} else {
		t.Log("no script(1) to give the CLI a terminal: the redraw is covered by cli's TestProgressOnTerminal only")
	}

	// Ctrl-C during the wait of a creation of 30 slow nodes.
	cmd := exec.Command(groveBin, "cluster", "create", "-profile", "slow", "-desired-capacity", "30", "-wait", "intr")
	cmd.Env = append(os.Environ(), "GROVE_ADDR="+a.addr)
	var stdout, stderr syncBuffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "the wait to show node creation", func() (bool, string) {
		return doneRE.MatchString(stderr.String()), stderr.String()
	})
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Fatalf("interrupted wait: %v; want exit 130; stderr:\n%s", err, stderr.String())
	}
	m := regexp.MustCompile("the agent goes on with action ([0-9a-f-]{36}) \\(Creating cluster intr\\)\\. Follow it with `(grove action wait [0-9a-f-]{36})`").
		FindStringSubmatch(stderr.String())
	if m == nil || strings.Contains(stderr.String(), "context canceled") || strings.Contains(stderr.String(), "Error:") {
		t.Fatalf("an interrupted wait says the action goes on and how to follow it:\n%s", stderr.String())
	}
	if act, err := a.client.GetAction(context.Background(), m[1]); err != nil || act.Terminal() || act.Action != "CLUSTER_CREATE" {
		t.Fatalf("the interrupted wait's action %s goes on: %+v %v", m[1], act, err)
	}
	follow := strings.Fields(m[2])
	out, errOut, code = a.grove(follow[1:]...)
	if code != 0 || !strings.Contains(out, "Action "+m[1]+": done (Cluster creation succeeded.)") || !strings.Contains(errOut, "30/30 nodes done") {
		t.Fatalf("%s: %d %s %s", m[2], code, out, errOut)
	}
	if cl := a.cluster("intr"); cl.Status != "ACTIVE" || len(cl.Nodes) != 30 {
		t.Fatalf("cluster intr after the followed creation: %s with %d nodes", cl.Status, len(cl.Nodes))
	}

	// Paging: the newest 20 actions, then the page the printed command
	// asks for, older and disjoint.
	pageOf := func(args ...string) ([]map[string]any, string) {
		t.Helper()
		out, errOut, code := a.grove(append(args, "-json")...)
		var items []map[string]any
		if code != 0 || json.Unmarshal([]byte(out), &items) != nil {
			t.Fatalf("grove %v: %d %s %s", args, code, out, errOut)
		}
		for i := 1; i < len(items); i++ {
			if items[i]["created_at"] != nil && items[i]["created_at"].(string) > items[i-1]["created_at"].(string) {
				t.Errorf("grove %v: item %d is newer than item %d", args, i, i-1)
			}
		}
		next := ""
		if _, after, ok := strings.Cut(errOut, "Next page: "); ok {
			next = strings.TrimSpace(after)
		}
		return items, next
	}
	first, next := pageOf("action", "list")
	if len(first) != 20 || !strings.HasPrefix(next, "grove action list -json -marker ") {
		t.Fatalf("action list: %d actions, next page %q; want 20 and the command", len(first), next)
	}
	newest, err := a.client.GetAction(context.Background(), m[1])
	if err != nil {
		t.Fatal(err)
	}
	for _, it := range first {
		if it["created_at"].(string) < *newest.CreatedAt {
			t.Errorf("the first page holds action %v of %v, older than the last cluster's creation", it["id"], it["created_at"])
		}
	}
	fields := strings.Fields(next)
	// The printed command asks for -json itself: pageOf adds it.
	second, _ := pageOf(slices.DeleteFunc(fields[1:], func(f string) bool { return f == "-json" })...)
	seen := map[any]bool{}
	for _, it := range first {
		seen[it["id"]] = true
	}
	if len(second) != 20 {
		t.Fatalf("the next page holds %d actions, want 20", len(second))
	}
	for _, it := range second {
		if seen[it["id"]] {
			t.Errorf("action %v is on both pages", it["id"])
		}
		if it["created_at"].(string) > first[len(first)-1]["created_at"].(string) {
			t.Errorf("action %v on the next page is newer than the first page's last", it["id"])
		}
	}
	events, next := pageOf("event", "list", "-cluster", "prog", "-limit", "5")
	if len(events) != 5 || !strings.HasPrefix(next, "grove event list -cluster prog -json -limit 5 -marker ") {
		t.Fatalf("event list -limit 5: %d events, next page %q", len(events), next)
	}
	all, next := pageOf("action", "list", "-limit", "0")
	if len(all) != actions || next != "" {
		t.Fatalf("action list -limit 0: %d actions, next page %q; want all %d and no next page", len(all), next, actions)
	}
}

// TestCLICreateWaitFailsOnDyingNodes: nodes whose process exits a second
// after it started fail their first health check, and with them `cluster
// create -wait` and `apply`, with exit code 1, naming the nodes and why.
func TestCLICreateWaitFailsOnDyingNodes(t *testing.T) {
	a := startAgent(t, t.TempDir())
	t.Cleanup(func() { killProcessesOf("dying"); killProcessesOf("dyinghcl") })
	dies := []any{"/bin/sh", "-c", "sleep 1; exit 1"}
	a.createProfile("dies", map[string]any{"command": dies})

	start := time.Now()
	out, errOut, code := a.grove("cluster", "create", "-profile", "dies", "-desired-capacity", "2", "-wait", "dying")
	if code != 1 || strings.Contains(out, "done") {
		t.Fatalf("cluster create -wait of dying nodes: exit %d, stdout %q, stderr %q; want exit 1", code, out, errOut)
	}
	for _, want := range []string{"Error: Cluster dying was created, but 2 of 2 nodes failed their first health check within 5s:",
		"process exited: status 1", "`grove cluster status dying`"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr does not say %q:\n%s", want, errOut)
		}
	}
	if took := time.Since(start); took < time.Second {
		t.Errorf("the nodes were judged in %s, before they died", took)
	}
	for _, n := range a.nodes("dying") {
		if !strings.Contains(errOut, "  "+n.Name+": ") {
			t.Errorf("stderr does not name node %s:\n%s", n.Name, errOut)
		}
	}

	def := filepath.Join(t.TempDir(), "dyinghcl")
	os.MkdirAll(def, 0o755)
	os.WriteFile(filepath.Join(def, "main.hcl"), []byte(`profile "dies" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/sh", "-c", "sleep 1; exit 1"]
  }
}

cluster "dyinghcl" {
  profile          = profile.dies
  desired_capacity = 1
}
`), 0o644)
	out, errOut, code = a.grove("apply", "-auto-approve", def)
	if code != 1 || strings.Contains(out, "Apply complete!") ||
		!strings.Contains(errOut, "Error: Cluster dyinghcl was created, but 1 of 1 node failed their first health check within 5s:") ||
		!strings.Contains(errOut, "The apply made its changes (Resources: 2 added") {
		t.Fatalf("apply of dying nodes: exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
}
