package e2e

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/store/postgres/pgtest"
)

// failoverClusterConfig is a failover cluster (orchestrate ha) with a 1s
// ready period and a 2s rejoin grace, so a takeover takes seconds.
var failoverClusterConfig = map[string]any{"config": map[string]any{"grove.failover": map[string]any{
	"topology": "failover", "orchestrate": "ha", "ready_period": "1s", "rejoin_grace_period": "2s"}}}

// instancesOf is a cluster's instances by host, as its GET shows them.
func instancesOf(a *agentProc, cluster string) (map[string]api.ClusterInstance, error) {
	cl, err := a.client.GetCluster(context.Background(), cluster)
	if err != nil {
		return nil, err
	}
	out := map[string]api.ClusterInstance{}
	for _, x := range cl.Instances {
		out[x.Host] = x
	}
	return out, nil
}

// showInstances is instances as host: status state flags, sorted.
func showInstances(in map[string]api.ClusterInstance) string {
	var s []string
	for h, x := range in {
		s = append(s, fmt.Sprintf("%s: %s %s %q (%s)", h, x.Status, x.State, x.Flags, x.Reason))
	}
	sort.Strings(s)
	return strings.Join(s, ", ")
}

// runningOn waits until the cluster has exactly one node, ACTIVE, on a
// host among hosts, and its instance there is up and idle, and returns
// that node.
func runningOn(t *testing.T, a *agentProc, cluster string, d time.Duration, hosts ...string) api.Node {
	t.Helper()
	var node api.Node
	eventually(t, d, "cluster "+cluster+" to run one node on one of "+strings.Join(hosts, ", "), func() (bool, string) {
		ns, err := a.client.ListNodes(context.Background(), map[string][]string{"cluster_id": {a.cluster(cluster).ID}})
		if err != nil {
			return false, err.Error()
		}
		in, err := instancesOf(a, cluster)
		if err != nil {
			return false, err.Error()
		}
		var where []string
		for _, n := range ns {
			where = append(where, n.Host+" "+n.Status)
		}
		why := fmt.Sprintf("nodes %v, instances %s", where, showInstances(in))
		if len(ns) != 1 || ns[0].Status != "ACTIVE" || !contains(hosts, ns[0].Host) || in[ns[0].Host].Status != "up" || in[ns[0].Host].State != "idle" {
			return false, why
		}
		node = ns[0]
		return true, why
	})
	return node
}

func contains(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// crashHost SIGKILLs a host's agent and the node processes it started,
// as the machine dying would.
func crashHost(a *agentProc, nodes []api.Node, host string) {
	a.kill()
	for _, n := range nodes {
		if pid, ok := n.Data["pid"].(float64); ok && n.Host == host {
			_ = syscall.Kill(-int(pid), syscall.SIGKILL)
		}
	}
}

// instanceCommand runs `grove cluster CMD -wait CLUSTER`. The monitor
// commands are accepted while another action of the cluster runs (the
// monitors' own CLUSTER_GLOBAL_SYNC, for one), so any failure fails the
// test.
func instanceCommand(t *testing.T, a *agentProc, cmd, cluster string) {
	t.Helper()
	if out, errOut, code := a.grove("cluster", cmd, "-wait", cluster); code != 0 {
		t.Fatalf("grove cluster %s -wait: exit %d\n%s%s", cmd, code, out, errOut)
	}
}

// hostDown waits until host is marked down.
func hostDown(t *testing.T, a *agentProc, host string) {
	t.Helper()
	eventually(t, 20*time.Second, host+" to be marked down", func() (bool, string) {
		h, err := a.client.GetHost(context.Background(), host)
		if err != nil {
			return false, err.Error()
		}
		return h.State == "down", h.State
	})
}

// TestFailoverThreeAgents runs three agents, each its own host, on one
// PostgreSQL store, and a failover cluster (orchestrate ha) of the demo
// HTTP server over them. It starts on one host only, after the ready
// period. The leader's machine dies: another host takes over and the
// service answers there; the dead host's node is forgotten. Frozen, the
// cluster does not fail over when the next leader dies; thawed, it does.
func TestFailoverThreeAgents(t *testing.T) {
	const cluster = "fo-e2e"
	srv := pgtest.Start(t, 55473)
	t.Cleanup(func() { killProcessesOf(cluster) })
	agents := map[string]*agentProc{}
	for _, h := range []string{"fo-a", "fo-b", "fo-c"} {
		dir := t.TempDir()
		agents[h] = startAgent(t, dir, "-config", hostsConfig(t, dir, srv.DSN(), h))
	}
	a := agents["fo-a"]
	eventually(t, 20*time.Second, "the three hosts to be up", func() (bool, string) {
		out, _, _ := a.grove("host", "list")
		return strings.Count(out, " up ") == 3, out
	})

	// 1. It starts on exactly one host, once the ready period has passed.
	a.webProfile("web")
	a.waitAction(a.createCluster(cluster, "web", 0, failoverClusterConfig))
	all := []string{"fo-a", "fo-b", "fo-c"}
	first := runningOn(t, a, cluster, 60*time.Second, all...)
	nodeAnswers(t, first)
	cl := a.cluster(cluster)
	created, err1 := time.Parse(time.RFC3339Nano, *cl.CreatedAt)
	started, err2 := time.Parse(time.RFC3339Nano, *first.CreatedAt)
	if err1 != nil || err2 != nil {
		t.Fatalf("created_at of the cluster %v, of its node %v", err1, err2)
	}
	if started.Sub(created) < time.Second {
		t.Errorf("the node was created %s after the cluster; want no start before the 1s ready period", started.Sub(created))
	}
	if cl.DesiredCapacity != 1 {
		t.Errorf("desired capacity %d with one instance up, want 1", cl.DesiredCapacity)
	}
	out, errOut, code := a.grove("cluster", "status", cluster)
	_, table, found := strings.Cut(out, "\nInstances:\n")
	if code != 0 || !found {
		t.Fatalf("grove cluster status: exit %d, want an Instances table\n%s%s", code, out, errOut)
	}
	shown := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(table), "\n")[1:] {
		if f := strings.Fields(line); len(f) >= 3 {
			shown[f[0]] = f[1] + " " + f[2]
		}
	}
	for _, h := range all {
		want := "down"
		if h == first.Host {
			want = "up"
		}
		if shown[h] != want+" idle" {
			t.Errorf("grove cluster status shows %s's instance as %q, want %q:\n%s", h, shown[h], want+" idle", out)
		}
		if in, _ := instancesOf(a, cluster); in[h].Status != want || in[h].State != "idle" {
			t.Errorf("instance on %s is %s %s, want %s idle", h, in[h].Status, in[h].State, want)
		}
	}

	// 2. The leader's machine dies: another host takes over.
	leader := first.Host
	var survivors []string
	for _, h := range all {
		if h != leader {
			survivors = append(survivors, h)
		}
	}
	obs := agents[survivors[0]]
	killedAt := time.Now()
	crashHost(agents[leader], a.nodes(cl.ID), leader)
	second := runningOn(t, obs, cluster, 60*time.Second, survivors...)
	nodeAnswers(t, second)
	t.Logf("%s took over from %s: the service answered %s after the kill", second.Host, leader, time.Since(killedAt).Round(time.Millisecond))
	if second.ID == first.ID {
		t.Errorf("the node after the takeover is the dead host's node %s", first.Name)
	}
	if in, _ := instancesOf(obs, cluster); in[leader].Status != "n/a" {
		t.Errorf("the dead leader's instance is %s, want n/a: %s", in[leader].Status, showInstances(in))
	}

	// 3. Frozen, the cluster does not fail over when its leader dies.
	instanceCommand(t, obs, "freeze", cluster)
	in, err := instancesOf(obs, cluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range all {
		// The dead host's instance (n/a: the monitor has no data of it)
		// shows its own frozen flag too.
		if !in[h].Frozen || !strings.Contains(in[h].Flags, "F") {
			t.Errorf("after the freeze, %s's instance is not frozen: %s", h, showInstances(in))
		}
	}
	leader2 := second.Host
	last := survivors[0]
	if last == leader2 {
		last = survivors[1]
	}
	obs = agents[last]
	crashHost(agents[leader2], obs.nodes(cl.ID), leader2)
	hostDown(t, obs, leader2)
	downAt := time.Now()
	// The remaining host heartbeats (and runs its health rounds, every
	// 300ms) well past its ready period: nothing may start meanwhile.
	for {
		ns, err := obs.client.ListNodes(context.Background(), map[string][]string{"cluster_id": {cl.ID}})
		if err != nil {
			t.Fatal(err)
		}
		in, err := instancesOf(obs, cluster)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range ns {
			if n.Host == last {
				t.Fatalf("a frozen cluster started node %s on %s after its leader died", n.Name, last)
			}
		}
		if st := in[last].State; st != "idle" {
			t.Fatalf("%s's frozen instance went %s after the leader died: %s", last, st, showInstances(in))
		}
		h, err := obs.client.GetHost(context.Background(), last)
		if err != nil {
			t.Fatal(err)
		}
		if beat, err := time.Parse(time.RFC3339Nano, h.Heartbeat); err == nil && beat.After(downAt.Add(4*time.Second)) {
			break
		}
		if time.Since(downAt) > 30*time.Second {
			t.Fatalf("%s did not heartbeat for 30s (last %s)", last, h.Heartbeat)
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Thawed, the last host takes over.
	thawedAt := time.Now()
	instanceCommand(t, obs, "thaw", cluster)
	third := runningOn(t, obs, cluster, 60*time.Second, last)
	nodeAnswers(t, third)
	t.Logf("%s took over once thawed, answering %s after the thaw", last, time.Since(thawedAt).Round(time.Millisecond))
}

// TestFailoverStartFailed: a failover cluster whose command does not
// exist fails to start on each host in turn: a failed start drops the
// host from the candidates and the next one tries, until every instance
// is in start failed and orchestration stops. `grove cluster clear -host`
// unblocks one instance: it tries again, alone, and fails again.
func TestFailoverStartFailed(t *testing.T) {
	const cluster = "fo-broken-e2e"
	srv := pgtest.Start(t, 55474)
	t.Cleanup(func() { killProcessesOf(cluster) })
	all := []string{"fb-a", "fb-b", "fb-c"}
	var a *agentProc
	for _, h := range all {
		dir := t.TempDir()
		p := startAgent(t, dir, "-config", hostsConfig(t, dir, srv.DSN(), h))
		if a == nil {
			a = p
		}
	}
	eventually(t, 20*time.Second, "the three hosts to be up", func() (bool, string) {
		out, _, _ := a.grove("host", "list")
		return strings.Count(out, " up ") == 3, out
	})
	a.createProfile("broken", map[string]any{"command": []any{"/nonexistent/grove-failover-e2e"}, "stop_timeout": 0})
	a.waitAction(a.createCluster(cluster, "broken", 0, failoverClusterConfig))
	eventually(t, 90*time.Second, "every instance to end in start failed", func() (bool, string) {
		in, err := instancesOf(a, cluster)
		if err != nil {
			return false, err.Error()
		}
		for _, h := range all {
			if in[h].State != "start failed" {
				return false, showInstances(in)
			}
		}
		return true, ""
	})
	for _, n := range a.nodes(a.cluster(cluster).ID) {
		if n.Status == "ACTIVE" {
			t.Errorf("node %s on %s is ACTIVE though every start failed", n.Name, n.Host)
		}
	}

	// Cleared, fb-b's instance is a candidate again, the only one: it
	// starts again and fails again; the others stay blocked.
	before, err := instancesOf(a, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if out, errOut, code := a.grove("cluster", "clear", "-host", "fb-b", "-wait", cluster); code != 0 {
		t.Fatalf("grove cluster clear -host fb-b -wait: exit %d\n%s%s", code, out, errOut)
	}
	eventually(t, 60*time.Second, "fb-b to start again and fail again", func() (bool, string) {
		in, err := instancesOf(a, cluster)
		if err != nil {
			return false, err.Error()
		}
		x := in["fb-b"]
		return x.State == "start failed" && *x.Since != *before["fb-b"].Since, showInstances(in)
	})
	in, _ := instancesOf(a, cluster)
	for _, h := range []string{"fb-a", "fb-c"} {
		if in[h].State != "start failed" || *in[h].Since != *before[h].Since {
			t.Errorf("%s's instance changed with fb-b's clear: %s", h, showInstances(in))
		}
	}
}
