package e2e

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestOpsThroughTheCLI drives local.process's node operations through the
// real binaries: a node stopped by `grove node op` loses its process and is
// WARNING (the restart supervisor leaves it alone), started again it keeps
// its id and answers; `grove cluster op` reaches every node; an operation
// the type does not have is refused with the ones it has.
func TestOpsThroughTheCLI(t *testing.T) {
	dir := t.TempDir()
	a := startAgent(t, dir)
	t.Cleanup(func() { killProcessesOf("opsweb") })
	a.webProfile("web")
	restart := map[string]any{"condition": "any", "delay": "0s", "max_attempts": 5, "window": "5m"}
	if act := a.waitAction(a.createCluster("opsweb", "web", 2, map[string]any{"config": map[string]any{"grove.restart": restart}})); act.Status != "SUCCEEDED" {
		t.Fatalf("create: %s %s", act.Status, act.StatusReason)
	}
	nodes := a.nodes("opsweb")
	target := nodes[0]

	if out, errOut, code := a.grove("node", "op", "-wait", target.Name, "stop"); code != 0 {
		t.Fatalf("node op stop: %d %s %s", code, out, errOut)
	}
	eventually(t, 10*time.Second, "one node process left", func() (bool, string) {
		n := len(processesOf("opsweb"))
		return n == 1, strconv.Itoa(n)
	})
	n, err := a.client.GetNode(context.Background(), target.ID)
	if err != nil || n.Status != "WARNING" {
		t.Fatalf("the stopped node: %+v %v, want WARNING", n, err)
	}

	if out, errOut, code := a.grove("node", "op", "-wait", target.ID, "start"); code != 0 {
		t.Fatalf("node op start: %d %s %s", code, out, errOut)
	}
	n, err = a.client.GetNode(context.Background(), target.ID)
	if err != nil || n.Status != "ACTIVE" || n.Name != target.Name {
		t.Fatalf("the started node: %+v %v, want ACTIVE under its name", n, err)
	}
	nodeAnswers(t, *n)

	before := processesOf("opsweb")
	if out, errOut, code := a.grove("cluster", "op", "-wait", "opsweb", "restart"); code != 0 {
		t.Fatalf("cluster op restart: %d %s %s", code, out, errOut)
	}
	after := processesOf("opsweb")
	if len(after) != 2 {
		t.Fatalf("after the cluster restart: %d processes, want 2", len(after))
	}
	for _, pid := range after {
		for _, old := range before {
			if pid == old {
				t.Errorf("process %d outlived the cluster restart", pid)
			}
		}
	}
	for _, n := range a.nodes("opsweb") {
		if n.Status != "ACTIVE" {
			t.Errorf("after the cluster restart node %s is %s", n.Name, n.Status)
		}
		nodeAnswers(t, n)
	}

	_, errOut, code := a.grove("node", "op", target.Name, "explode")
	if code != 1 || !strings.Contains(errOut, "explode") || !strings.Contains(errOut, "stop") {
		t.Errorf("an unknown operation: %d %q, want a refusal naming it and the type's operations", code, errOut)
	}
}
