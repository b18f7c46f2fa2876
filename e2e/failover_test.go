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
	return runningAnew(t, a, cluster, d, "", hosts...)
}

// runningAnew is runningOn for a node other than the one whose ID is old:
// a node whose process died while its agent was away still shows ACTIVE,
// and its instance up, until that agent's first health check after its
// return marks it down (docs/failover.md, "Maintenance and rejoin").
func runningAnew(t *testing.T, a *agentProc, cluster string, d time.Duration, old string, hosts ...string) api.Node {
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
			where = append(where, n.Host+" "+n.Name+" "+n.Status)
		}
		why := fmt.Sprintf("nodes %v, instances %s", where, showInstances(in))
		if len(ns) != 1 || ns[0].Status != "ACTIVE" || !contains(hosts, ns[0].Host) || in[ns[0].Host].Status != "up" || in[ns[0].Host].State != "idle" {
			return false, why
		}
		if old != "" && ns[0].ID == old {
			return false, why + " (the node is the one that was there before)"
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
	agents := startHostAgents(t, srv.DSN(), "fo-a", "fo-b", "fo-c")
	a := agents["fo-a"]

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
	a := startHostAgents(t, srv.DSN(), all...)[all[0]]
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

// threeHosts starts three agents on one PostgreSQL store, each its own
// host, and waits until the three hosts are up. It returns the agents and
// their configs and data dirs by host name, to restart them.
func threeHosts(t *testing.T, port int, names ...string) (agents map[string]*agentProc, restart func(host string) *agentProc) {
	t.Helper()
	srv := pgtest.Start(t, port)
	agents = map[string]*agentProc{}
	dirs, configs := map[string]string{}, map[string]string{}
	for _, h := range names {
		dirs[h] = t.TempDir()
		configs[h] = hostsConfig(t, dirs[h], srv.DSN(), h)
		agents[h] = startAgent(t, dirs[h], "-config", configs[h])
	}
	a := agents[names[0]]
	eventually(t, 20*time.Second, "the three hosts to be up", func() (bool, string) {
		out, _, _ := a.grove("host", "list")
		return strings.Count(out, " up ") == 3, out
	})
	// An agent started again on its data dir and config is the same host
	// back, with the node processes it left running.
	restart = func(host string) *agentProc {
		agents[host] = startAgent(t, dirs[host], "-config", configs[host])
		return agents[host]
	}
	return agents, restart
}

// waitHostState waits until host is in state, as obs sees it.
func waitHostState(t *testing.T, obs *agentProc, host, state string) {
	t.Helper()
	eventually(t, 20*time.Second, host+" to be "+state, func() (bool, string) {
		h, err := obs.client.GetHost(context.Background(), host)
		if err != nil {
			return false, err.Error()
		}
		return h.State == state, h.State
	})
}

// heartbeatAfter says whether host heartbeated after t, as obs sees it.
func heartbeatAfter(obs *agentProc, host string, t time.Time) (bool, string) {
	h, err := obs.client.GetHost(context.Background(), host)
	if err != nil {
		return false, err.Error()
	}
	beat, err := time.Parse(time.RFC3339Nano, h.Heartbeat)
	return err == nil && beat.After(t), h.Heartbeat
}

// stillOn checks, until the live host obsHost has heartbeated `lasting`
// after the call (the agents' own clock, not the test's), that the
// cluster's only node is still node, ACTIVE, and that no instance leaves
// idle: nothing moves.
func stillOn(t *testing.T, obs *agentProc, obsHost, cluster string, node api.Node, lasting time.Duration, why string) {
	t.Helper()
	from := time.Now()
	id := obs.cluster(cluster).ID
	for {
		ns, err := obs.client.ListNodes(context.Background(), map[string][]string{"cluster_id": {id}})
		if err != nil {
			t.Fatal(err)
		}
		in, err := instancesOf(obs, cluster)
		if err != nil {
			t.Fatal(err)
		}
		if len(ns) != 1 || ns[0].ID != node.ID || ns[0].Status != "ACTIVE" {
			var where []string
			for _, n := range ns {
				where = append(where, n.Name+" on "+n.Host+" "+n.Status)
			}
			t.Fatalf("%s: the cluster's nodes are %v, want %s on %s alone: %s", why, where, node.Name, node.Host, showInstances(in))
		}
		for h, x := range in {
			if x.State != "idle" {
				t.Fatalf("%s: %s's instance went %s: %s", why, h, x.State, showInstances(in))
			}
		}
		if ok, _ := heartbeatAfter(obs, obsHost, from.Add(lasting)); ok {
			return
		}
		if time.Since(from) > lasting+30*time.Second {
			t.Fatalf("%s: %s did not heartbeat for %s", why, obsHost, lasting+30*time.Second)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestFailoverMaintenance: the leader's agent of a failover cluster stops
// cleanly, so its host is in maintenance. Restarted at once, with its
// node still running, nothing happens: the same node runs on. Stopped
// again, its peers keep its last state (up) through the maintenance
// grace (20s) and take nothing over, well past the heartbeat timeout
// and the ready period, even after the test kills its node's processes
// (by the pid in the node's data); restarted within the grace, it finds
// its instance down and starts it again on itself. The cluster's
// restart policy is none, so the start is the instance monitor's, not
// the restart supervisor's.
func TestFailoverMaintenance(t *testing.T) {
	const cluster = "fo-maint-e2e"
	t.Cleanup(func() { killProcessesOf(cluster) })
	all := []string{"fm-a", "fm-b", "fm-c"}
	agents, restart := threeHosts(t, 55475, all...)
	a := agents["fm-a"]
	a.webProfile("web")
	a.waitAction(a.createCluster(cluster, "web", 0, map[string]any{"config": map[string]any{
		"grove.failover": map[string]any{"topology": "failover", "orchestrate": "ha", "ready_period": "1s",
			"rejoin_grace_period": "2s", "maintenance_grace_period": "20s"},
		"grove.restart": map[string]any{"condition": "none"}}}))
	first := runningOn(t, a, cluster, 60*time.Second, all...)
	nodeAnswers(t, first)
	leader := first.Host
	if leader != "fm-a" {
		t.Errorf("the cluster started on %s; want fm-a, the default placement's leader", leader)
	}
	var obsHost string
	for _, h := range all {
		if h != leader {
			obsHost = h
			break
		}
	}
	obs := agents[obsHost]

	// An agent restart: its node runs on, nothing moves.
	agents[leader].stop()
	waitHostState(t, obs, leader, "maintenance")
	restart(leader)
	waitHostState(t, obs, leader, "up")
	stillOn(t, obs, obsHost, cluster, first, 3*time.Second, "after "+leader+"'s agent restarted")
	nodeAnswers(t, first)

	// A reboot: the agent stops cleanly, nothing moves during the grace,
	// its processes die meanwhile.
	agents[leader].stop()
	stoppedAt := time.Now()
	waitHostState(t, obs, leader, "maintenance")
	// Past the 2s down timeout plus the 1s ready period, with margin.
	stillOn(t, obs, obsHost, cluster, first, 4*time.Second, leader+" in maintenance")
	in, err := instancesOf(obs, cluster)
	if err != nil {
		t.Fatal(err)
	}
	if x := in[leader]; x.Status != "up" {
		t.Errorf("%s's instance during its maintenance grace is %s, want its last state kept (up): %s", leader, x.Status, showInstances(in))
	}
	pid, ok := first.Data["pid"].(float64)
	if !ok {
		t.Fatalf("node %s has no pid in its data: %v", first.Name, first.Data)
	}
	_ = syscall.Kill(-int(pid), syscall.SIGKILL)
	addr, _ := first.Data["address"].(string)
	eventually(t, 10*time.Second, "node "+first.Name+" to stop answering", func() (bool, string) {
		_, err := httpGet(addr)
		return err != nil, fmt.Sprint(err)
	})
	stillOn(t, obs, obsHost, cluster, first, time.Second, leader+" in maintenance, its node's processes dead")

	// Back within the grace: the instance starts again on it, on a new
	// node. Until the agent's first health check finds the dead node's
	// process gone, the store still shows that node ACTIVE and the
	// instance up and idle: the wait is for another node.
	back := restart(leader)
	t.Logf("%s's agent is back %s after its stop (grace 20s)", leader, time.Since(stoppedAt).Round(time.Millisecond))
	again := runningAnew(t, back, cluster, 60*time.Second, first.ID, leader)
	nodeAnswers(t, again)
}

// flexUpOn waits until a cluster's instances up are exactly on hosts
// (sorted), each with an ACTIVE node there, and every instance is idle;
// the other hosts' instances are down or n/a.
func flexUpOn(t *testing.T, a *agentProc, cluster string, d time.Duration, hosts ...string) {
	t.Helper()
	eventually(t, d, "cluster "+cluster+" to be up on "+strings.Join(hosts, ", ")+" only", func() (bool, string) {
		ns, err := a.client.ListNodes(context.Background(), map[string][]string{"cluster_id": {a.cluster(cluster).ID}})
		if err != nil {
			return false, err.Error()
		}
		in, err := instancesOf(a, cluster)
		if err != nil {
			return false, err.Error()
		}
		active := map[string]bool{}
		var where []string
		for _, n := range ns {
			where = append(where, n.Host+" "+n.Status)
			if n.Status == "ACTIVE" {
				active[n.Host] = true
			}
		}
		why := fmt.Sprintf("nodes %v, instances %s", where, showInstances(in))
		var up []string
		for h, x := range in {
			if x.State != "idle" {
				return false, why
			}
			if x.Status == "up" {
				up = append(up, h)
			}
		}
		sort.Strings(up)
		for _, h := range hosts {
			if !active[h] {
				return false, why
			}
		}
		return fmt.Sprint(up) == fmt.Sprint(hosts), why
	})
}

// TestFlexHostsComeAndGo: a flex cluster (flex_target 2, orchestrate ha)
// of the demo HTTP server over three agents keeps two instances up as
// hosts come and go: on the first two hosts; when one dies, on the other
// two; when it comes back, nothing changes; when one stops cleanly, its
// instance counts until its maintenance grace (3s) expires (what the
// grace holds back is TestFailoverMaintenance's), then the returned host
// starts one; when the stopped one comes back with its node still
// running, three are up and the worst-ranked stops.
func TestFlexHostsComeAndGo(t *testing.T) {
	const cluster = "flex-e2e"
	t.Cleanup(func() { killProcessesOf(cluster) })
	all := []string{"fx-a", "fx-b", "fx-c"}
	agents, restart := threeHosts(t, 55476, all...)
	a := agents["fx-a"]
	a.webProfile("web")
	a.waitAction(a.createCluster(cluster, "web", 0, map[string]any{"config": map[string]any{
		"grove.failover": map[string]any{"topology": "flex", "orchestrate": "ha", "flex_target": 2, "ready_period": "1s",
			"rejoin_grace_period": "2s", "maintenance_grace_period": "3s"}}}))
	flexUpOn(t, a, cluster, 60*time.Second, "fx-a", "fx-b")
	if cl := a.cluster(cluster); cl.DesiredCapacity != 2 {
		t.Errorf("desired capacity %d with two instances up, want 2", cl.DesiredCapacity)
	}
	for _, n := range a.nodes(a.cluster(cluster).ID) {
		nodeAnswers(t, n)
	}

	// fx-b's machine dies: fx-c starts the second instance.
	id := a.cluster(cluster).ID
	crashHost(agents["fx-b"], a.nodes(id), "fx-b")
	flexUpOn(t, a, cluster, 60*time.Second, "fx-a", "fx-c")
	var onC api.Node
	for _, n := range a.nodes(id) {
		if n.Host == "fx-b" {
			t.Errorf("node %s of the dead host fx-b is still in the cluster", n.Name)
		}
		if n.Host == "fx-c" {
			onC = n
		}
	}
	nodeAnswers(t, onC)

	// fx-b is back: two are up, it starts nothing.
	restart("fx-b")
	waitHostState(t, a, "fx-b", "up")
	back := time.Now()
	for {
		flexUpOn(t, a, cluster, 10*time.Second, "fx-a", "fx-c")
		if ok, _ := heartbeatAfter(a, "fx-a", back.Add(3*time.Second)); ok {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	// fx-a stops cleanly: kept up through its grace, then fx-b starts one.
	agents["fx-a"].stop()
	obs := agents["fx-c"]
	waitHostState(t, obs, "fx-a", "maintenance")
	flexUpOn(t, obs, cluster, 60*time.Second, "fx-b", "fx-c")
	if in, _ := instancesOf(obs, cluster); in["fx-a"].Status != "n/a" {
		t.Errorf("fx-a's instance after its grace is %s, want n/a: %s", in["fx-a"].Status, showInstances(in))
	}

	// fx-a is back with its node still running: three are up, one too
	// many, and the worst-ranked, fx-c, stops.
	restart("fx-a")
	flexUpOn(t, obs, cluster, 60*time.Second, "fx-a", "fx-b")
	for _, n := range obs.nodes(id) {
		if n.Host == "fx-c" {
			t.Errorf("node %s on fx-c is still there (%s) after its instance stopped", n.Name, n.Status)
		}
	}
}

// startHostAgents starts one agent per host name on the PostgreSQL at dsn,
// each with hostsConfig's short heartbeat and down timeout, and waits until
// every host is up.
func startHostAgents(t *testing.T, dsn string, names ...string) map[string]*agentProc {
	t.Helper()
	agents := map[string]*agentProc{}
	for _, h := range names {
		dir := t.TempDir()
		agents[h] = startAgent(t, dir, "-config", hostsConfig(t, dir, dsn, h))
	}
	a := agents[names[0]]
	eventually(t, 20*time.Second, fmt.Sprintf("the %d hosts to be up", len(names)), func() (bool, string) {
		out, _, _ := a.grove("host", "list")
		return strings.Count(out, " up ") == len(names), out
	})
	return agents
}
