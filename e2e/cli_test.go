package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
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
		"policy senlin.policy.zone_placement", "policy senlin.policy.region_placement", "policy senlin.policy.health"}
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
