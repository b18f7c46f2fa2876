package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

// Dependencies between local.process clusters, through a real agent: the
// clusters' processes are what the tests look at.

// runState is a cluster's run state and reason.
func (a *agentProc) runState(name string) (string, string) {
	a.t.Helper()
	cl := a.cluster(name)
	return cl.RunState, cl.RunReason
}

// waitRunState waits until a cluster is in a run state.
func (a *agentProc) waitRunState(name, want string) {
	a.t.Helper()
	eventually(a.t, 30*time.Second, name+" "+want, func() (bool, string) {
		st, reason := a.runState(name)
		return st == want, st + " " + reason
	})
}

// depend replaces a cluster's declared dependency groups.
func (a *agentProc) depend(cluster string, groups ...api.DependencyGroup) {
	a.t.Helper()
	if _, err := a.client.PutDependencies(context.Background(), cluster, api.DependenciesPut{Groups: groups}); err != nil {
		a.t.Fatalf("dependencies of %s: %v", cluster, err)
	}
}

// runs says whether a cluster has its n node processes running.
func runs(cluster string, n int) func() (bool, string) {
	return func() (bool, string) {
		got := processesOf(cluster)
		return len(got) == n, fmt.Sprintf("%d processes of %s", len(got), cluster)
	}
}

func (a *agentProc) sleeperProfile(name string) {
	a.createProfile(name, map[string]any{"command": []any{"sleep", "300"}, "stop_timeout": 1})
}

// TestDependencyWebOnDB: web depends on db (require_all, restart_on
// error). Started while db is stopped, web waits with its processes
// stopped and the reason shown; db's start brings it up. db's node killed
// is a fault: web stops and comes back once the supervisor restarted db.
// db refreshed leaves web alone.
func TestDependencyWebOnDB(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	t.Cleanup(func() { killProcessesOf("db"); killProcessesOf("web") })
	a.sleeperProfile("sleeper")
	restart := map[string]any{"condition": "any", "delay": "1s"}
	a.waitAction(a.createCluster("db", "sleeper", 1, map[string]any{"config": map[string]any{"grove.restart": restart}}))
	a.waitAction(a.createCluster("web", "sleeper", 2, nil))
	a.depend("web", api.DependencyGroup{Name: "database", Grouping: "require_all", RestartOn: "error", Members: []string{"db"}})

	// web waits until db runs.
	out, errOut, code := a.grove("cluster", "stop", "-wait", "db")
	if code != 0 {
		t.Fatalf("grove cluster stop db: %d %s %s", code, out, errOut)
	}
	eventually(t, 20*time.Second, "db's process to stop", runs("db", 0))
	if st, _ := a.runState("web"); st != "running" {
		t.Errorf("web (restart_on error) is %s after the operator stopped db, want running (§C.5 bypass)", st)
	}
	a.waitAction(a.clusterAction("web", "stop", nil))
	eventually(t, 20*time.Second, "web's processes to stop", runs("web", 0))
	a.waitAction(a.clusterAction("web", "start", nil))
	if st, reason := a.runState("web"); st != "offline" || !strings.Contains(reason, "db") {
		t.Fatalf("web started while db is stopped is %s (%q), want offline waiting on db", st, reason)
	}
	out, _, _ = a.grove("cluster", "status", "web")
	if !strings.Contains(out, "state offline") || !strings.Contains(out, "db") {
		t.Errorf("grove cluster status web does not show why it waits:\n%s", out)
	}
	if got := processesOf("web"); len(got) != 0 {
		t.Errorf("web has %d processes while it waits on db", len(got))
	}
	a.waitAction(a.clusterAction("db", "start", nil))
	a.waitRunState("web", "running")
	eventually(t, 20*time.Second, "web's processes to run", runs("web", 2))

	// db refreshed: web (restart_on error) untouched.
	before := processesOf("web")
	a.waitAction(a.clusterAction("db", "refresh", nil))
	if after := processesOf("web"); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("db's refresh changed web's processes: %v, then %v", before, after)
	}

	// db's node SIGKILLed: web stops, and comes back once db runs again.
	dbNode := a.nodes(a.cluster("db").ID)[0]
	killNodeProcess(t, dbNode)
	eventually(t, 20*time.Second, "web to stop after db's fault", func() (bool, string) {
		st, reason := a.runState("web")
		return st == "offline" && len(processesOf("web")) == 0, st + " " + reason
	})
	a.waitRunState("db", "running")
	a.waitRunState("web", "running")
	eventually(t, 20*time.Second, "web's processes to run again", runs("web", 2))
	for _, p := range processesOf("web") {
		for _, q := range before {
			if p == q {
				t.Errorf("web's process %d survived db's fault", p)
			}
		}
	}
}

// TestDependencyOperatorStop: the operator's stop of db takes down web
// (restart_on restart) first, leaves first.
func TestDependencyOperatorStop(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	t.Cleanup(func() { killProcessesOf("db"); killProcessesOf("web") })
	a.sleeperProfile("sleeper")
	a.waitAction(a.createCluster("db", "sleeper", 1, nil))
	a.waitAction(a.createCluster("web", "sleeper", 1, nil))
	a.depend("web", api.DependencyGroup{Name: "database", Grouping: "require_all", RestartOn: "restart", Members: []string{"db"}})
	act := a.waitAction(a.clusterAction("db", "stop", nil))
	if act.Status != "SUCCEEDED" {
		t.Fatalf("stop db: %s %s", act.Status, act.StatusReason)
	}
	if got := processesOf("web"); len(got) != 0 {
		t.Errorf("web has %d processes once the operator's stop of db ended, want them stopped first", len(got))
	}
	if st, _ := a.runState("web"); st != "offline" {
		t.Errorf("web is %s after db was stopped, want offline", st)
	}
	eventually(t, 20*time.Second, "db's process to stop", runs("db", 0))
}

// TestDependencyExcludeAndPath: an exclude_all dependency coming up stops
// its dependent; a path dependency waits for its file.
func TestDependencyExcludeAndPath(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	t.Cleanup(func() { killProcessesOf("legacy"); killProcessesOf("web"); killProcessesOf("worker") })
	a.sleeperProfile("sleeper")
	a.waitAction(a.createCluster("legacy", "sleeper", 1, nil))
	a.waitAction(a.clusterAction("legacy", "stop", nil))
	a.waitAction(a.createCluster("web", "sleeper", 1, nil))
	a.depend("web", api.DependencyGroup{Name: "no-legacy", Grouping: "exclude_all", RestartOn: "restart", Members: []string{"legacy"}})
	a.waitAction(a.clusterAction("legacy", "start", nil))
	a.waitRunState("web", "offline")
	eventually(t, 20*time.Second, "web's process to stop", runs("web", 0))

	flag := filepath.Join(dir, "ready")
	a.waitAction(a.createCluster("worker", "sleeper", 1, nil))
	a.depend("worker", api.DependencyGroup{Name: "flag", Grouping: "require_all", RestartOn: "none", Members: []string{"path:" + flag}})
	a.waitAction(a.clusterAction("worker", "stop", nil))
	a.waitAction(a.clusterAction("worker", "start", nil))
	if st, reason := a.runState("worker"); st != "offline" || !strings.Contains(reason, flag) {
		t.Fatalf("worker without its file is %s (%q), want offline naming the file", st, reason)
	}
	if got := processesOf("worker"); len(got) != 0 {
		t.Errorf("worker runs %d processes without its file", len(got))
	}
	if err := os.WriteFile(flag, []byte("ready\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	a.waitRunState("worker", "running")
	eventually(t, 20*time.Second, "worker's process to run", runs("worker", 1))
}

// TestDependencyMilestone: a milestone brings a three-cluster stack up in
// order, and `none` takes it down leaves first.
func TestDependencyMilestone(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	t.Cleanup(func() { killProcessesOf("db"); killProcessesOf("app"); killProcessesOf("web") })
	a.sleeperProfile("sleeper")
	for _, n := range []string{"db", "app", "web"} {
		a.waitAction(a.createCluster(n, "sleeper", 1, nil))
	}
	a.depend("app", api.DependencyGroup{Name: "database", Grouping: "require_all", RestartOn: "error", Members: []string{"db"}})
	a.depend("web", api.DependencyGroup{Name: "application", Grouping: "require_all", RestartOn: "error", Members: []string{"app"}})
	if _, err := a.client.CreateMilestone(context.Background(), api.MilestoneCreate{Name: "stack", Clusters: []string{"web"}}); err != nil {
		t.Fatal(err)
	}

	out, errOut, code := a.grove("milestone", "enter", "-wait", "none")
	if code != 0 {
		t.Fatalf("grove milestone enter none: %d %s %s", code, out, errOut)
	}
	if i, j, k := strings.Index(out, "stop web"), strings.Index(out, "stop app"), strings.Index(out, "stop db"); i < 0 || !(i < j && j < k) {
		t.Errorf("milestone none does not stop web, app, db in that order:\n%s", out)
	}
	for _, n := range []string{"db", "app", "web"} {
		eventually(t, 20*time.Second, n+"'s process to stop", runs(n, 0))
	}
	// Leaves first: each stop action ended before the next began.
	order := stopOrder(t, a, []string{"web", "app", "db"})
	if order != "" {
		t.Error(order)
	}

	out, errOut, code = a.grove("milestone", "enter", "-wait", "stack")
	if code != 0 {
		t.Fatalf("grove milestone enter stack: %d %s %s", code, out, errOut)
	}
	if i, j, k := strings.Index(out, "start db"), strings.Index(out, "start app"), strings.Index(out, "start web"); i < 0 || !(i < j && j < k) {
		t.Errorf("milestone stack does not start db, app, web in that order:\n%s", out)
	}
	for _, n := range []string{"db", "app", "web"} {
		eventually(t, 20*time.Second, n+"'s process to run", runs(n, 1))
	}
}

// stopOrder checks that each cluster's CLUSTER_STOP ended before the next
// one's began; it returns what is wrong, or "".
func stopOrder(t *testing.T, a *agentProc, names []string) string {
	t.Helper()
	var list struct {
		Actions []api.Action `json:"actions"`
	}
	if _, err := a.client.Do(context.Background(), "GET", "/v1/actions", map[string][]string{"action": {"CLUSTER_STOP"}}, nil, &list); err != nil {
		t.Fatal(err)
	}
	acts := list.Actions
	ends := map[string][2]float64{}
	for _, n := range names {
		id := a.cluster(n).ID
		for _, act := range acts {
			if act.Target == id {
				ends[n] = [2]float64{act.StartTime, act.EndTime}
			}
		}
	}
	for i := 1; i < len(names); i++ {
		prev, cur := ends[names[i-1]], ends[names[i]]
		if prev[1] == 0 || cur[0] == 0 || prev[1] > cur[0] {
			return fmt.Sprintf("%s's stop (%v) did not end before %s's began (%v)", names[i-1], prev, names[i], cur)
		}
	}
	return ""
}
