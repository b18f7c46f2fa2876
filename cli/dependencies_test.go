package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t *testing.T, name, src string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// threeTier is docs/dependencies.md's simulation: web waits on app
// (restart_on restart), app on db (restart_on error); db faults.
const threeTier = `{
  "clusters": [
    {"name": "db", "state": "running"},
    {"name": "app", "state": "running", "groups": [
      {"name": "database", "grouping": "require_all", "restart_on": "error", "members": ["db"]}]},
    {"name": "web", "state": "running", "groups": [
      {"name": "backend", "grouping": "require_all", "restart_on": "restart", "members": ["app"]},
      {"name": "config", "grouping": "require_all", "restart_on": "none", "members": ["path:/etc/web.conf"]}]}
  ],
  "paths": {"/etc/web.conf": true},
  "event": {"kind": "fault", "cluster": "db"}
}`

// TestDepsSimulate: the simulation prints each cluster's verdict, then the
// stops leaves first and the restarts once db runs again.
func TestDepsSimulate(t *testing.T) {
	out, errOut, code := runCLI(t, "deps", "simulate", "-f", writeFile(t, "graph.json", threeTier))
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	for _, want := range []string{
		"Event fault on db:\n  1. stop web (dependency: app stopped (dependency), group backend restart_on restart)\n  2. stop app (dependency: db stopped (fault), group database restart_on error)\n",
		"Once db runs again:\n  1. start app (dependency: db running, group database satisfied)\n  2. start web (dependency: app running, group backend satisfied)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	// Without the path, web is held and says why.
	noPath := strings.Replace(threeTier, `"/etc/web.conf": true`, `"/etc/web.conf": false`, 1)
	noPath = strings.Replace(noPath, `"name": "web", "state": "running"`, `"name": "web", "state": "offline"`, 1)
	out, _, code = runCLI(t, "deps", "simulate", "-f", writeFile(t, "graph.json", noPath))
	if code != 0 || !strings.Contains(out, "waiting on path:/etc/web.conf: does not exist") {
		t.Errorf("exit %d:\n%s", code, out)
	}
}

// TestDepsSimulateReconcile: the reconcile event prints the stops a graph
// owes after a crash cut a cascade short: db faulted and web already
// stopped, app (restart_on error) still running.
func TestDepsSimulateReconcile(t *testing.T) {
	src := `{
  "clusters": [
    {"name": "db", "state": "offline", "down": "fault"},
    {"name": "app", "state": "running", "groups": [
      {"name": "database", "grouping": "require_all", "restart_on": "error", "members": ["db"]}]},
    {"name": "web", "state": "offline", "down": "stop", "groups": [
      {"name": "backend", "grouping": "require_all", "restart_on": "restart", "members": ["app"]}]}
  ],
  "event": {"kind": "reconcile"}
}`
	out, errOut, code := runCLI(t, "deps", "simulate", "-f", writeFile(t, "graph.json", src))
	if want := "Event reconcile on the graph as it stands:\n  1. stop app (dependency: db is down (fault), group database restart_on error)\n"; code != 0 || !strings.Contains(out, want) {
		t.Errorf("exit %d, stderr %q, output lacks %q:\n%s", code, errOut, want, out)
	}
	_, errOut, code = runCLI(t, "deps", "simulate", "-f", writeFile(t, "graph.json", strings.Replace(src, `"down": "fault"`, `"down": "crash"`, 1)))
	if code == 0 || !strings.Contains(errOut, `a level is none, fault, stop or refresh, not "crash"`) {
		t.Errorf("a bad down: exit %d, stderr %q", code, errOut)
	}
}

// TestDepsSimulateRefusesBadFiles: the field and the rule are named.
func TestDepsSimulateRefusesBadFiles(t *testing.T) {
	cases := map[string]string{
		`{"clusters": [{"name": "a", "state": "up"}]}`: `clusters[0].state must be running, offline, uninitialized, stopped or maintenance, not "up".`,
		`{"clusters": [{"name": "a", "state": "running", "groups": [{"name": "g", "grouping": "all", "restart_on": "none"}]}]}`: `clusters[0].groups[0].grouping: Dependency group "g": grouping must be one of`,
		`{"clusters": [], "colour": 1}`: `unknown field "colour"`,
		`{"clusters": [{"name": "a", "state": "running"}], "event": {"kind": "explode", "cluster": "a"}}`: `Event kind "explode" is not one of`,
	}
	for src, want := range cases {
		_, errOut, code := runCLI(t, "deps", "simulate", "-f", writeFile(t, "graph.json", src))
		if code == 0 || !strings.Contains(errOut, want) {
			t.Errorf("%s: exit %d, stderr %q, want %q", src, code, errOut, want)
		}
	}
}
