package e2e

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/store/postgres/pgtest"
)

// TestGlobalClusterTwoAgents runs a global local.process cluster
// (grove.failover topology global) over two agents on one PostgreSQL
// store, each its own host: one node per host, its desired capacity
// following the hosts; a drained host's node is shut down and not moved,
// and comes back once the host is active; a manual scale-out is refused;
// a SIGKILLed agent's host goes down and its node is removed, not
// recreated on the other host.
func TestGlobalClusterTwoAgents(t *testing.T) {
	srv := pgtest.Start(t, 55472)
	t.Cleanup(func() { killProcessesOf("everywhere") })
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startAgent(t, dirA, "-config", hostsConfig(t, dirA, srv.DSN(), "host-a"))
	b := startAgent(t, dirB, "-config", hostsConfig(t, dirB, srv.DSN(), "host-b"))

	a.webProfile("web")
	a.waitAction(a.createCluster("everywhere", "web", 0, map[string]any{"config": map[string]any{"grove.failover": map[string]any{"topology": "global"}}}))
	follows := func(what string, want ...string) {
		t.Helper()
		eventually(t, 60*time.Second, what, func() (bool, string) {
			got, ok, why := nodesByHost(a, "everywhere")
			cl := a.cluster("everywhere")
			ok = ok && len(got) == len(want) && cl.DesiredCapacity == len(want)
			for _, h := range want {
				ok = ok && got[h] == 1
			}
			return ok, fmt.Sprintf("nodes per host %v, desired capacity %d (%s)", got, cl.DesiredCapacity, why)
		})
	}
	follows("one node on each host", "host-a", "host-b")
	for _, n := range a.nodes(a.cluster("everywhere").ID) {
		nodeAnswers(t, n)
	}

	if _, err := a.client.ClusterAction(context.Background(), "everywhere", "scale_out", map[string]any{"count": 1}); err == nil || !strings.Contains(err.Error(), "is global") {
		t.Errorf("scale_out of a global cluster: %v, want a refusal saying it is global", err)
	}

	if out, errOut, code := a.grove("host", "update", "-availability", "drain", "host-b"); code != 0 {
		t.Fatalf("grove host update -availability drain: exit %d\n%s%s", code, out, errOut)
	}
	follows("host-b's node to be shut down, not moved", "host-a")
	if out, errOut, code := a.grove("host", "update", "-availability", "active", "host-b"); code != 0 {
		t.Fatalf("grove host update -availability active: exit %d\n%s%s", code, out, errOut)
	}
	follows("host-b to get a node again", "host-a", "host-b")

	b.kill()
	follows("host-b's node to be removed, not recreated on host-a", "host-a")
}
