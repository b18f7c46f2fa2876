package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestHCLApply drives grove validate, plan, apply and destroy against a real
// agent with the quickstart example, as a user would.
func TestHCLApply(t *testing.T) {
	a := startAgent(t, t.TempDir())
	t.Cleanup(func() { killProcessesOf("quickstart") })
	ex := "../examples/hcl/quickstart"

	out, errOut, code := a.grove("validate", ex)
	if code != 0 || !strings.Contains(out, `"quickstart" is valid`) {
		t.Fatalf("validate: %d %s %s", code, out, errOut)
	}
	out, _, code = a.grove("plan", "-detailed-exitcode", "-var", "nodes=2", ex)
	if code != 2 || !strings.Contains(out, "Plan: 3 to add, 0 to change, 0 to replace, 0 to destroy.") {
		t.Fatalf("first plan: %d\n%s", code, out)
	}
	_, errOut, code = a.grove("apply", "-var", "nodes=2", ex)
	if code != 2 || !strings.Contains(errOut, "pass -auto-approve") {
		t.Fatalf("apply without a terminal must ask for -auto-approve: %d %s", code, errOut)
	}
	out, errOut, code = a.grove("apply", "-auto-approve", "-var", "nodes=2", ex)
	if code != 0 || !strings.Contains(out, "Apply complete! Resources: 3 added") {
		t.Fatalf("apply: %d\n%s\n%s", code, out, errOut)
	}
	cl := a.cluster("quickstart")
	if cl.Status != "ACTIVE" || len(cl.Nodes) != 2 || cl.Config["grove.restart"] == nil || len(cl.Policies) != 1 {
		t.Fatalf("cluster after apply: %+v", cl)
	}
	for _, n := range a.nodes(cl.ID) {
		nodeAnswers(t, n)
	}
	out, _, code = a.grove("plan", "-detailed-exitcode", "-var", "nodes=2", ex)
	if code != 0 || !strings.Contains(out, "No changes.") {
		t.Fatalf("a second plan after apply must be empty: %d\n%s", code, out)
	}

	// A saved plan applies exactly; a stale one is refused.
	planFile := filepath.Join(t.TempDir(), "grow.plan")
	out, _, code = a.grove("plan", "-var", "nodes=3", "-out", planFile, ex)
	if code != 0 || !strings.Contains(out, "desired_capacity = 2 -> 3") {
		t.Fatalf("plan -out: %d\n%s", code, out)
	}
	stale := filepath.Join(t.TempDir(), "stale.plan")
	a.grove("plan", "-var", "nodes=4", "-out", stale, ex)
	out, errOut, code = a.grove("apply", planFile)
	if code != 0 || len(a.cluster("quickstart").Nodes) != 3 {
		t.Fatalf("apply a saved plan: %d\n%s\n%s", code, out, errOut)
	}
	_, errOut, code = a.grove("apply", stale)
	if code != 1 || !strings.Contains(errOut, "stale") {
		t.Fatalf("a stale plan must be refused: %d %s", code, errOut)
	}

	// A profile change replaces the profile and rolls the cluster onto it.
	src, _ := os.ReadFile(filepath.Join(ex, "main.hcl"))
	changed := filepath.Join(t.TempDir(), "main.hcl")
	os.WriteFile(changed, []byte(strings.Replace(string(src), `GREETING = "hello"`, `GREETING = "bonjour"`, 1)), 0o644)
	out, _, code = a.grove("plan", "-var", "nodes=3", changed)
	if code != 0 || !strings.Contains(out, "profile.web must be replaced") || !strings.Contains(out, "# forces replacement") ||
		!strings.Contains(out, "cluster.quickstart will be updated in place") {
		t.Fatalf("plan of a profile change:\n%s", out)
	}
	out, errOut, code = a.grove("apply", "-auto-approve", "-var", "nodes=3", changed)
	if code != 0 {
		t.Fatalf("apply a profile change: %s %s", out, errOut)
	}
	out, _, code = a.grove("plan", "-detailed-exitcode", "-var", "nodes=3", changed)
	if code != 0 {
		t.Fatalf("plan after the profile change: %d\n%s", code, out)
	}

	// Another set may not take over this set's objects.
	_, errOut, code = a.grove("plan", "-set", "intruder", "-var", "nodes=3", changed)
	if code != 1 || !strings.Contains(errOut, `owned by definition set "quickstart"`) {
		t.Fatalf("another set's objects: %d %s", code, errOut)
	}

	// Destroy removes exactly what the set owns.
	a.webProfile("unrelated")
	out, errOut, code = a.grove("destroy", "-auto-approve", ex)
	if code != 0 || !strings.Contains(out, "3 destroyed") {
		t.Fatalf("destroy: %d\n%s\n%s", code, out, errOut)
	}
	if _, err := a.client.GetCluster(t.Context(), "quickstart"); err == nil {
		t.Fatal("the cluster survived destroy")
	}
	var profiles map[string][]map[string]any
	a.mustDo("GET", "/v1/profiles", nil, &profiles)
	if len(profiles["profiles"]) != 1 || profiles["profiles"][0]["name"] != "unrelated" {
		t.Fatalf("destroy must leave objects it does not own: %v", profiles)
	}
	eventually(t, 15*time.Second, "the quickstart processes to go", func() (bool, string) {
		n := len(processesOf("quickstart"))
		return n == 0, strconv.Itoa(n)
	})
}

// TestHCLDiagnostics checks that validate points at the exact character.
func TestHCLDiagnostics(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "bad.hcl"), []byte(`profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = "not a list"
  }
}

cluster "web" {
  profile = profile.web
  restart {
    condition = "sometimes"
  }
}
`), 0o644)
	cmd := exec.Command(groveBin, "validate", "-address", "127.0.0.1:1", dir)
	out, _ := cmd.CombinedOutput()
	s := string(out)
	if cmd.ProcessState.ExitCode() != 1 {
		t.Fatalf("validate of a bad definition must exit 1:\n%s", s)
	}
	for _, want := range []string{
		"bad.hcl:12:17:", `condition = "sometimes"`, `restart.condition: "sometimes" is not one of "none", "on-failure", "any".`,
	} {
		if !strings.Contains(s, want) {
			t.Errorf("validate output lacks %q:\n%s", want, s)
		}
	}
	os.WriteFile(filepath.Join(dir, "bad.hcl"), []byte(`profile "web" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = "not a list"
  }
}
`), 0o644)
	out, _ = exec.Command(groveBin, "validate", "-address", "127.0.0.1:1", dir).CombinedOutput()
	if !strings.Contains(string(out), "bad.hcl:5:15:") || !strings.Contains(string(out), "properties.command: must be a list") {
		t.Errorf("a property error points at the value:\n%s", out)
	}
	unformatted := filepath.Join(dir, "fmt.hcl")
	os.WriteFile(unformatted, []byte("cluster \"x\" {\nprofile=profile.y\n}\n"), 0o644)
	cmd = exec.Command(groveBin, "fmt", "-check", unformatted)
	out, _ = cmd.CombinedOutput()
	if cmd.ProcessState.ExitCode() != 3 || !strings.Contains(string(out), "fmt.hcl") {
		t.Fatalf("fmt -check: %d %s", cmd.ProcessState.ExitCode(), out)
	}
	if err := exec.Command(groveBin, "fmt", unformatted).Run(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(unformatted)
	if !strings.Contains(string(b), "  profile = profile.y") {
		t.Fatalf("fmt output:\n%s", b)
	}
}
