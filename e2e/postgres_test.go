package e2e

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/store/postgres/pgtest"
)

// TestTwoAgentsShareOnePostgres runs two agents on one PostgreSQL store.
// Both see the same clusters; when one is killed in the middle of a cluster
// creation, the other takes its actions over once their lease expires.
func TestTwoAgentsShareOnePostgres(t *testing.T) {
	srv := pgtest.Start(t, 55451)
	config := func(dir string) string {
		path := filepath.Join(dir, "agent.hcl")
		body := fmt.Sprintf("store {\n  driver = \"postgres\"\n  dsn = %q\n}\nworkers {\n  node = 1\n  node_batch = 1\n  lease_seconds = 2\n}\n", srv.DSN())
		if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	dirA, dirB := t.TempDir(), t.TempDir()
	a := startAgent(t, dirA, "-config", config(dirA))
	b := startAgent(t, dirB, "-config", config(dirB))
	a.mustDo(http.MethodPost, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "slow",
		"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{"create_delay": 50}}}}, nil)
	// A profile written through one agent is read through the other.
	var p struct {
		Profile api.Profile `json:"profile"`
	}
	b.mustDo(http.MethodGet, "/v1/profiles/slow", nil, &p)
	if p.Profile.Type != "grove.noop-1.0" {
		t.Fatalf("profile through agent B: %+v", p.Profile)
	}

	actionID := a.createCluster("shared", "slow", 30, nil)
	eventually(t, 30*time.Second, "agent A to create some nodes", func() (bool, string) {
		n := activeNodes(b, "shared")
		return n > 0, strconv.Itoa(n)
	})
	a.kill()
	if n := activeNodes(b, "shared"); n >= 30 {
		t.Fatalf("the creation finished before agent A was killed")
	}
	act := b.waitAction(actionID)
	if act.Status != "SUCCEEDED" {
		t.Fatalf("creation taken over by agent B: %s %s", act.Status, act.StatusReason)
	}
	cl := b.cluster("shared")
	if cl.Status != "ACTIVE" || len(cl.Nodes) != 30 || activeNodes(b, "shared") != 30 {
		t.Fatalf("cluster after takeover: %s (%s), %d nodes", cl.Status, cl.StatusReason, len(cl.Nodes))
	}
}
