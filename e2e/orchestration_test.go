package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

// fastConfig checks health every 200ms and reaps often.
func fastConfig(t *testing.T, dir string, extra string) string {
	path := filepath.Join(dir, "agent.hcl")
	body := "orchestrator {\n  check_interval = \"200ms\"\n  reap_interval = \"200ms\"\n" + extra + "}\n"
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func restarts(n api.Node) int {
	if r, ok := n.Data["restarts"].(map[string]any); ok {
		if c, ok := r["count"].(float64); ok {
			return int(c)
		}
	}
	return 0
}

func killNodeProcess(t *testing.T, n api.Node) {
	t.Helper()
	// The recorded pid is the node's process itself, its supervisor's
	// child.
	pid := int(n.Data["pid"].(float64))
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
}

func TestRestartSupervisor(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	t.Cleanup(func() { killProcessesOf("sup"); killProcessesOf("loop"); killProcessesOf("done") })
	a.webProfile("web")
	restart := map[string]any{"condition": "any", "delay": "1s", "max_attempts": 3, "window": "1m"}
	a.waitAction(a.createCluster("sup", "web", 2, map[string]any{"config": map[string]any{"grove.restart": restart}}))

	// A killed node process is found dead and replaced after the delay.
	victim := a.nodes(a.cluster("sup").ID)[0]
	killed := time.Now()
	killNodeProcess(t, victim)
	var back *api.Node
	eventually(t, 20*time.Second, "the dead node to be restarted", func() (bool, string) {
		n, err := a.client.GetNode(t.Context(), victim.ID)
		if err != nil {
			return false, err.Error()
		}
		back = n
		return n.Status == "ACTIVE" && n.Data["pid"] != victim.Data["pid"], n.Status + " " + n.StatusReason
	})
	if took := time.Since(killed); took < time.Second {
		t.Errorf("the node came back after %s, before the 1s restart delay", took)
	}
	if restarts(*back) != 1 || back.Data["port"] != victim.Data["port"] || back.Name != victim.Name {
		t.Errorf("restarted node: restarts %d, port %v (was %v)", restarts(*back), back.Data["port"], victim.Data["port"])
	}
	nodeAnswers(t, *back)
	if cl := a.cluster("sup"); cl.Status != "ACTIVE" {
		t.Errorf("cluster after the restart: %s %s", cl.Status, cl.StatusReason)
	}

	// A profile whose process exits at once is restarted max_attempts times
	// within the window, then left in ERROR with the reason.
	a.createProfile("crash", map[string]any{"command": []any{"sh", "-c", "sleep 0.2; exit 3"}})
	a.waitAction(a.createCluster("loop", "crash", 1, map[string]any{"config": map[string]any{
		"grove.restart": map[string]any{"condition": "on-failure", "delay": "0s", "max_attempts": 2, "window": "1m"}}}))
	clID := a.cluster("loop").ID
	eventually(t, 30*time.Second, "the crash loop to stop", func() (bool, string) {
		n := a.nodes(clID)[0]
		return strings.Contains(n.StatusReason, "restart limit is reached"), fmt.Sprintf("%s %q restarts=%d", n.Status, n.StatusReason, restarts(n))
	})
	n := a.nodes(clID)[0]
	if n.Status != "ERROR" || restarts(n) != 2 {
		t.Fatalf("after the crash loop: %s, %d restarts", n.Status, restarts(n))
	}
	if cl := a.cluster("loop"); cl.Status != "WARNING" || !strings.Contains(cl.StatusReason, "below desired_capacity (1)") {
		t.Errorf("a cluster with no active node but min_size 0 is WARNING (seed 004): %s %s", cl.Status, cl.StatusReason)
	}

	// on-failure leaves a process that exited 0 alone.
	a.createProfile("oneshot", map[string]any{"command": []any{"sh", "-c", "sleep 0.2"}})
	a.waitAction(a.createCluster("done", "oneshot", 1, map[string]any{"config": map[string]any{
		"grove.restart": map[string]any{"condition": "on-failure", "delay": "0s"}}}))
	doneID := a.cluster("done").ID
	eventually(t, 20*time.Second, "the finished node to be left alone", func() (bool, string) {
		n := a.nodes(doneID)[0]
		return strings.Contains(n.StatusReason, "restart condition is on-failure"), n.StatusReason
	})
	if n := a.nodes(doneID)[0]; restarts(n) != 0 {
		t.Errorf("a node that completed was restarted %d times", restarts(n))
	}

	out, _, code := a.grove("cluster", "status", "loop")
	if code != 0 || !strings.Contains(out, "desired 1, actual 1 (0 active)") || !strings.Contains(out, "restart limit") {
		t.Errorf("cluster status:\n%s", out)
	}
}

// TestRestartAfterAgentDowntime: a node that dies while the agent is stopped
// is recovered after the agent starts.
func TestRestartAfterAgentDowntime(t *testing.T) {
	dir := t.TempDir()
	cfg := fastConfig(t, dir, "")
	a := startAgent(t, dir, "-config", cfg)
	t.Cleanup(func() { killProcessesOf("down") })
	a.webProfile("web")
	a.waitAction(a.createCluster("down", "web", 2, map[string]any{"config": map[string]any{"grove.restart": map[string]any{"delay": "0s"}}}))
	victim := a.nodes(a.cluster("down").ID)[1]
	a.stop()
	killNodeProcess(t, victim)
	b := startAgent(t, dir, "-config", cfg)
	eventually(t, 20*time.Second, "the node that died during the downtime to be back", func() (bool, string) {
		n, err := b.client.GetNode(t.Context(), victim.ID)
		if err != nil {
			return false, err.Error()
		}
		return n.Status == "ACTIVE" && n.Data["pid"] != victim.Data["pid"], n.Status + " " + n.StatusReason
	})
	if got := len(processesOf("down")); got != 2 {
		t.Errorf("2 node processes expected after the recovery, found %d", got)
	}
}

func updateCluster(t *testing.T, a *agentProc, cluster, profile string) *api.Action {
	t.Helper()
	r := a.mustDo(http.MethodPatch, "/v1/clusters/"+cluster, map[string]any{"cluster": map[string]any{"profile_id": profile}}, nil)
	return waitEnd(t, a, r.ActionID())
}

func profileNames(a *agentProc, cluster string) map[string]int {
	out := map[string]int{}
	for _, n := range a.nodes(a.cluster(cluster).ID) {
		out[n.ProfileName]++
	}
	return out
}

func TestRollingUpdate(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, ""))
	t.Cleanup(func() { killProcessesOf("roll"); killProcessesOf("sf"); killProcessesOf("pz") })
	a.webProfile("v1")
	a.createProfile("v2", map[string]any{"command": []any{groveBin, "demo-http"}, "env": map[string]any{"V": "2"}, "stop_timeout": 5})
	a.createProfile("broken", map[string]any{"command": []any{"sh", "-c", "exit 1"}})

	// An update to a command that exits at once rolls back by itself.
	update := map[string]any{"parallelism": 1, "monitor": "1s", "failure_action": "rollback"}
	a.waitAction(a.createCluster("roll", "v1", 3, map[string]any{"config": map[string]any{"grove.update": update}}))
	act := updateCluster(t, a, "roll", "broken")
	if act.Status != "FAILED" || !strings.Contains(act.StatusReason, "Update rolled back") {
		t.Fatalf("update to a crashing command: %s %s", act.Status, act.StatusReason)
	}
	cl := a.cluster("roll")
	if cl.ProfileName != "v1" || profileNames(a, "roll")["v1"] != 3 {
		t.Fatalf("after the rollback: cluster on %s, nodes %v", cl.ProfileName, profileNames(a, "roll"))
	}
	for _, n := range a.nodes(cl.ID) {
		nodeAnswers(t, n)
	}
	if u := cl.Data["update"].(map[string]any); u["status"] != "rolled back" || u["failures"] != 1.0 {
		t.Errorf("the cluster shows the rollback: %v", u)
	}

	// start-first never drops below desired capacity.
	sf := map[string]any{"parallelism": 1, "monitor": "500ms", "order": "start-first"}
	a.waitAction(a.createCluster("sf", "v1", 3, map[string]any{"config": map[string]any{"grove.update": sf}}))
	sfID := a.cluster("sf").ID
	r := a.mustDo(http.MethodPatch, "/v1/clusters/sf", map[string]any{"cluster": map[string]any{"profile_id": "v2"}}, nil)
	lowest := 3
	for {
		act, err := a.client.GetAction(t.Context(), r.ActionID())
		if err != nil {
			t.Fatal(err)
		}
		if n := activeNodes(a, sfID); n < lowest {
			lowest = n
		}
		if act.Terminal() {
			if act.Status != "SUCCEEDED" {
				t.Fatalf("start-first update: %s %s", act.Status, act.StatusReason)
			}
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if lowest < 3 {
		t.Errorf("a start-first update dropped to %d ACTIVE nodes of 3", lowest)
	}
	if names := profileNames(a, "sf"); names["v2"] != 3 || len(names) != 1 || a.cluster("sf").ProfileName != "v2" {
		t.Fatalf("after the start-first update: %v", names)
	}
	for _, n := range a.nodes(sfID) {
		nodeAnswers(t, n)
	}

	// A paused update is visible and can be rolled back by the user.
	pause := map[string]any{"parallelism": 1, "monitor": "500ms", "failure_action": "pause"}
	a.waitAction(a.createCluster("pz", "v1", 2, map[string]any{"config": map[string]any{"grove.update": pause}}))
	act = updateCluster(t, a, "pz", "broken")
	if act.Status != "FAILED" || !strings.Contains(act.StatusReason, "Update paused") {
		t.Fatalf("update with failure_action pause: %s %s", act.Status, act.StatusReason)
	}
	out, _, _ := a.grove("cluster", "status", "pz")
	if !strings.Contains(out, "Update: paused") || !strings.Contains(out, "update-rollback pz") {
		t.Fatalf("status of a paused update:\n%s", out)
	}
	out, errOut, code := a.grove("cluster", "update-rollback", "-wait", "pz")
	if code != 0 {
		t.Fatalf("update-rollback: %s %s", out, errOut)
	}
	if names := profileNames(a, "pz"); names["v1"] != 2 {
		t.Fatalf("after the user's rollback: %v", names)
	}
	_, errOut, code = a.grove("cluster", "update-resume", "pz")
	if code != 1 || !strings.Contains(errOut, "no paused update") {
		t.Fatalf("resuming without a paused update: %d %s", code, errOut)
	}
}

func TestReaper(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir, "-config", fastConfig(t, dir, "  retention = 4\n"))
	noopProfile(a, "noop", 0)
	a.waitAction(a.createCluster("reap", "noop", 1, nil))
	n := a.nodes(a.cluster("reap").ID)[0]
	for i := 0; i < 8; i++ {
		r := a.mustDo(http.MethodPost, "/v1/nodes/"+n.ID+"/actions", map[string]any{"check": map[string]any{}}, nil)
		a.waitAction(r.ActionID())
	}
	eventually(t, 10*time.Second, "the reaper to keep 4 actions of the node", func() (bool, string) {
		var list struct {
			Actions []api.Action `json:"actions"`
		}
		a.mustDo(http.MethodGet, "/v1/actions?target="+n.ID, nil, &list)
		return len(list.Actions) == 4, strconv.Itoa(len(list.Actions))
	})
	var evs struct {
		Events []api.Event `json:"events"`
	}
	eventually(t, 10*time.Second, "the reaper to keep 4 events of the node", func() (bool, string) {
		a.mustDo(http.MethodGet, "/v1/events?oid="+n.ID, nil, &evs)
		return len(evs.Events) == 4, strconv.Itoa(len(evs.Events))
	})
}

// TestDriverEvents: with checks an hour apart, a node whose process exits is
// still replaced at once, from the event local.process streams.
func TestDriverEvents(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	os.WriteFile(cfg, []byte("orchestrator {\n  check_interval = \"1h\"\n}\n"), 0o644)
	a := startAgent(t, dir, "-config", cfg)
	t.Cleanup(func() { killProcessesOf("ev") })
	a.webProfile("web")
	a.waitAction(a.createCluster("ev", "web", 1, map[string]any{"config": map[string]any{"grove.restart": map[string]any{"delay": "0s"}}}))
	victim := a.nodes(a.cluster("ev").ID)[0]
	// Twice: with unlimited attempts every restart is still counted.
	for want := 1; want <= 2; want++ {
		killNodeProcess(t, victim)
		var back *api.Node
		eventually(t, 15*time.Second, "the node to be replaced from the driver's event", func() (bool, string) {
			n, err := a.client.GetNode(t.Context(), victim.ID)
			if err != nil {
				return false, err.Error()
			}
			back = n
			return n.Status == "ACTIVE" && n.Data["pid"] != victim.Data["pid"], n.Status + " " + n.StatusReason
		})
		if got := restarts(*back); got != want {
			t.Errorf("after restart %d the node counts %d restarts", want, got)
		}
		victim = *back
	}
}
