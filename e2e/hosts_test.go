package e2e

import (
	"context"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/store/postgres/pgtest"
)

// hostsConfig is an agent config for host name on the PostgreSQL store at
// dsn, with short heartbeats and checks so a dead host is found in seconds.
func hostsConfig(t *testing.T, dir, dsn, name string) string {
	return pgAgentConfig(t, dir, dsn, fmt.Sprintf(`host_name = %q
host_labels = { side = %q }
host_heartbeat_interval = "300ms"
host_down_timeout = "2s"
orchestrator {
  check_interval = "300ms"
}
workers {
  lease_seconds = 2
}
`, name, name))
}

// nodesByHost counts a cluster's nodes per host, and says whether all of
// them and the cluster are ACTIVE.
func nodesByHost(a *agentProc, cluster string) (map[string]int, bool, string) {
	cl, err := a.client.GetCluster(context.Background(), cluster)
	if err != nil {
		return nil, false, err.Error()
	}
	ns, err := a.client.ListNodes(context.Background(), map[string][]string{"cluster_id": {cl.ID}})
	if err != nil {
		return nil, false, err.Error()
	}
	out := map[string]int{}
	ok := cl.Status == "ACTIVE"
	why := "cluster " + cl.Status + ": " + cl.StatusReason
	for _, n := range ns {
		out[n.Host]++
		if n.Status != "ACTIVE" {
			ok, why = false, fmt.Sprintf("node %s on %q is %s: %s", n.Name, n.Host, n.Status, n.StatusReason)
		}
	}
	return out, ok, why
}

// clusterIdle is a condition for eventually: no action on the cluster is
// running or waiting. A CLUSTER_MOVE_NODES that ended other than SUCCEEDED
// fails the test.
func clusterIdle(a *agentProc, clusterID string) func() (bool, string) {
	failed := map[string]bool{}
	return func() (bool, string) {
		var list struct {
			Actions []api.Action `json:"actions"`
		}
		if _, err := a.client.Do(context.Background(), http.MethodGet, "/v1/actions", map[string][]string{"target": {clusterID}}, nil, &list); err != nil {
			return false, err.Error()
		}
		var running []string
		for _, act := range list.Actions {
			switch {
			case !act.Terminal():
				running = append(running, act.Action+" "+act.Status)
			case act.Action == "CLUSTER_MOVE_NODES" && act.Status != "SUCCEEDED" && !failed[act.ID]:
				failed[act.ID] = true
				a.t.Errorf("action %s %s %s: %s", act.Action, act.ID, act.Status, act.StatusReason)
			}
		}
		return len(running) == 0, strings.Join(running, ", ")
	}
}

// TestHostsTwoAgentsOnePostgres runs two agents, each its own host, on one
// PostgreSQL store. A local.process cluster of the demo HTTP server spreads
// over both, each node's process started by the agent of its host. One
// agent is SIGKILLed (and its machine's node processes with it): its host
// goes down after the heartbeat timeout and its nodes are recreated on the
// other host. The dead host's agent comes back; draining a host moves its
// nodes to the other without the cluster going below its desired
// capacity; undrained, it takes new nodes again. An agent stopped cleanly
// leaves its host in maintenance, its nodes where they are.
func TestHostsTwoAgentsOnePostgres(t *testing.T) {
	srv := pgtest.Start(t, 55471)
	t.Cleanup(func() { killProcessesOf("spread") })
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startAgent(t, dirA, "-config", hostsConfig(t, dirA, srv.DSN(), "host-a"))
	b := startAgent(t, dirB, "-config", hostsConfig(t, dirB, srv.DSN(), "host-b"))
	agentOf := map[string]*agentProc{"host-a": a, "host-b": b}

	out, errOut, code := a.grove("host", "list")
	if code != 0 || !strings.Contains(out, "host-a") || !strings.Contains(out, "host-b") || strings.Count(out, " up ") != 2 {
		t.Fatalf("grove host list: exit %d\n%s%s", code, out, errOut)
	}
	hb, err := a.client.GetHost(context.Background(), "host-b")
	if err != nil || hb.Kind != "agent" || hb.Labels["side"] != "host-b" || hb.Driver != "local.process" || len(hb.Load) != 3 {
		t.Fatalf("host-b: %+v, %v", hb, err)
	}

	a.webProfile("web")
	a.waitAction(a.createCluster("spread", "web", 4, nil))
	if got, ok, why := nodesByHost(a, "spread"); !ok || got["host-a"] != 2 || got["host-b"] != 2 {
		t.Fatalf("nodes per host %v (%s), want 2 and 2", got, why)
	}
	for _, n := range a.nodes(a.cluster("spread").ID) {
		nodeAnswers(t, n)
		// The node's process was started by the supervisor of its host's
		// agent's plugin data directory.
		if dir := helperDir(int(n.Data["pid"].(float64))); !strings.HasPrefix(dir, agentOf[n.Host].dataDir+string(filepath.Separator)) {
			t.Errorf("node %s of %s was started by the supervisor of %q, not by that host's agent (data dir %s)", n.Name, n.Host, dir, agentOf[n.Host].dataDir)
		}
	}

	// host-b's machine dies: its agent and its node processes.
	clusterID := a.cluster("spread").ID
	var lost []string
	for _, n := range a.nodes(clusterID) {
		if n.Host == "host-b" {
			lost = append(lost, n.ID)
		}
	}
	b.kill()
	for _, n := range a.nodes(clusterID) {
		if n.Host == "host-b" {
			_ = syscall.Kill(-int(n.Data["pid"].(float64)), syscall.SIGKILL)
		}
	}
	eventually(t, 20*time.Second, "host-b to be marked down", func() (bool, string) {
		h, err := a.client.GetHost(context.Background(), "host-b")
		if err != nil {
			return false, err.Error()
		}
		return h.State == "down", h.State
	})
	eventually(t, 60*time.Second, "host-b's nodes to be recreated on host-a", func() (bool, string) {
		got, ok, why := nodesByHost(a, "spread")
		return ok && got["host-a"] == 4 && len(got) == 1, fmt.Sprintf("%v %s", got, why)
	})
	for _, n := range a.nodes(clusterID) {
		if slices.Contains(lost, n.ID) {
			t.Errorf("node %s of the dead host is still a member", n.Name)
		}
		nodeAnswers(t, n)
	}
	if cl := a.cluster("spread"); cl.DesiredCapacity != 4 {
		t.Errorf("desired capacity %d after the recovery, want 4", cl.DesiredCapacity)
	}

	// host-b's agent is back; host-a is drained: its nodes move to host-b,
	// each replacement started before the node it replaces goes.
	b2 := startAgent(t, dirB, "-config", hostsConfig(t, dirB, srv.DSN(), "host-b"))
	eventually(t, 10*time.Second, "host-b to be up again", func() (bool, string) {
		h, err := a.client.GetHost(context.Background(), "host-b")
		if err != nil {
			return false, err.Error()
		}
		return h.State == "up", h.State
	})
	if out, errOut, code := a.grove("host", "update", "-availability", "drain", "host-a"); code != 0 || !strings.Contains(out, "Host host-a is up and drain") {
		t.Fatalf("grove host update -availability drain: exit %d\n%s%s", code, out, errOut)
	}
	minActive := 4
	eventually(t, 60*time.Second, "host-a's nodes to move to host-b", func() (bool, string) {
		ns, err := a.client.ListNodes(context.Background(), map[string][]string{"cluster_id": {clusterID}})
		if err == nil {
			active := 0
			for _, n := range ns {
				if n.Status == "ACTIVE" {
					active++
				}
			}
			minActive = min(minActive, active)
		}
		got, ok, why := nodesByHost(a, "spread")
		return ok && got["host-b"] == 4 && len(got) == 1, fmt.Sprintf("%v %s", got, why)
	})
	// The nodes look moved as soon as the last old node's deletion is done,
	// but the CLUSTER_MOVE_NODES action is not over yet: it still sees its
	// children end, settles the cluster and runs the AFTER checks, and the
	// cluster takes no other action until it has ended.
	eventually(t, 30*time.Second, "the drain's CLUSTER_MOVE_NODES to end", clusterIdle(a, clusterID))
	if minActive < 4 {
		t.Errorf("the drain went down to %d active nodes, below the desired capacity 4", minActive)
	}
	for _, n := range a.nodes(clusterID) {
		nodeAnswers(t, n)
		if dir := helperDir(int(n.Data["pid"].(float64))); !strings.HasPrefix(dir, b2.dataDir+string(filepath.Separator)) {
			t.Errorf("moved node %s was started by the supervisor of %q, not by host-b's agent (data dir %s)", n.Name, dir, b2.dataDir)
		}
	}

	// Undrained, host-a takes new nodes again: it has the fewest.
	if out, errOut, code := a.grove("host", "update", "-availability", "active", "host-a"); code != 0 {
		t.Fatalf("grove host update -availability active: exit %d\n%s%s", code, out, errOut)
	}
	a.waitAction(a.clusterAction("spread", "scale_out", map[string]any{"count": 2}))
	if got, ok, why := nodesByHost(a, "spread"); !ok || got["host-a"] != 2 || got["host-b"] != 4 {
		t.Fatalf("after the scale-out: nodes per host %v (%s), want 2 on host-a and 4 on host-b", got, why)
	}
	var hosts []api.HostRecord
	a.mustDo(http.MethodGet, "/v1/hosts", nil, &struct {
		Hosts *[]api.HostRecord `json:"hosts"`
	}{&hosts})
	for _, h := range hosts {
		if want := map[string]int{"host-a": 2, "host-b": 4}[h.Name]; h.Nodes != want || h.Availability != "active" {
			t.Errorf("GET /v1/hosts: %s has %d nodes and is %s, want %d and active", h.Name, h.Nodes, h.Availability, want)
		}
	}

	// host-a's agent stops cleanly: its host is in maintenance, neither
	// marked down nor emptied, however long it stays away.
	a.stop()
	stopped := time.Now()
	eventually(t, 20*time.Second, "host-b to heartbeat past host-a's down timeout", func() (bool, string) {
		h, err := b2.client.GetHost(context.Background(), "host-b")
		if err != nil {
			return false, err.Error()
		}
		beat, err := time.Parse(time.RFC3339Nano, h.Heartbeat)
		return err == nil && beat.After(stopped.Add(3*time.Second)), h.Heartbeat
	})
	if h, err := b2.client.GetHost(context.Background(), "host-a"); err != nil || h.State != "maintenance" {
		t.Errorf("host-a after its agent stopped cleanly: %+v, %v; want maintenance", h, err)
	}
	if got, _, why := nodesByHost(b2, "spread"); got["host-a"] != 2 || got["host-b"] != 4 {
		t.Errorf("nodes per host %v (%s) while host-a is in maintenance, want them left where they are", got, why)
	}
}
