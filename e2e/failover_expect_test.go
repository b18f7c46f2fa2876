package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/store/postgres/pgtest"
)

// TestFailoverSwitchGiveback runs three agents, each its own host, on one
// PostgreSQL store, and a failover cluster (orchestrate ha) of the demo
// HTTP server over them. Once it runs on the leader, `grove cluster
// switch -host` to a frozen host is refused naming it; to another host it
// moves the service there (it answers there, and only there runs a
// node); `grove cluster giveback` brings it back to the leader; `grove
// cluster stop` stops it and nothing restarts it; `grove cluster start`
// brings it up again. Each command's -wait returns once the instance
// monitors reached it.
func TestFailoverSwitchGiveback(t *testing.T) {
	const cluster = "fo-expect-e2e"
	srv := pgtest.Start(t, 55493)
	t.Cleanup(func() { killProcessesOf(cluster) })
	all := []string{"fx-a", "fx-b", "fx-c"}
	a := startHostAgents(t, srv.DSN(), all...)[all[0]]
	a.webProfile("web")
	a.waitAction(a.createCluster(cluster, "web", 0, failoverClusterConfig))
	first := runningOn(t, a, cluster, 60*time.Second, all...)
	nodeAnswers(t, first)
	var target string
	for _, h := range all {
		if h != first.Host {
			target = h
			break
		}
	}

	grove := func(args ...string) (string, string, int) {
		t.Helper()
		return a.grove(append([]string{"cluster"}, args...)...)
	}
	mustGrove := func(args ...string) {
		t.Helper()
		if out, errOut, code := grove(args...); code != 0 {
			t.Fatalf("grove cluster %v: exit %d\n%s%s", args, code, out, errOut)
		}
	}

	// A switch to a frozen host is refused, naming the host and why.
	mustGrove("freeze", "-host", target, "-wait", cluster)
	if _, errOut, code := grove("switch", "-host", target, "-wait", cluster); code == 0 || !strings.Contains(errOut, `"`+target+`"`) || !strings.Contains(errOut, "frozen") {
		t.Errorf("switch to frozen %s: exit %d %q; want a refusal naming it and frozen", target, code, errOut)
	}
	mustGrove("thaw", "-host", target, "-wait", cluster)

	// switch: the service moves to the target and answers there.
	mustGrove("switch", "-host", target, "-wait", cluster)
	moved := runningOn(t, a, cluster, 30*time.Second, target)
	nodeAnswers(t, moved)
	out, _, _ := grove("status", cluster)
	if !strings.Contains(out, "Last expectation: reached") {
		t.Errorf("grove cluster status after the switch does not say it was reached:\n%s", out)
	}

	// giveback: back to the placement's leader, where it first ran.
	mustGrove("giveback", "-wait", cluster)
	back := runningOn(t, a, cluster, 30*time.Second, first.Host)
	nodeAnswers(t, back)

	// stop: nothing runs, and nothing restarts it past a ready period.
	mustGrove("stop", "-wait", cluster)
	eventually(t, 30*time.Second, "no node of the cluster", func() (bool, string) {
		ns := a.nodes(a.cluster(cluster).ID)
		return len(ns) == 0, fmt.Sprintf("%d nodes", len(ns))
	})
	in, err := instancesOf(a, cluster)
	if err != nil {
		t.Fatal(err)
	}
	for _, h := range all {
		if !in[h].Frozen {
			t.Errorf("the instance on %s is not frozen after stop: %s", h, showInstances(in))
		}
	}

	// start: thawed, it runs on the leader again.
	mustGrove("start", "-wait", cluster)
	again := runningOn(t, a, cluster, 30*time.Second, first.Host)
	nodeAnswers(t, again)
}
