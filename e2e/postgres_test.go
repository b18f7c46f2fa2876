package e2e

import (
	"database/sql"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/store/postgres/pgtest"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// pgAgentConfig writes an agent config using the PostgreSQL store at dsn,
// followed by extra blocks, and returns its path.
func pgAgentConfig(t *testing.T, dir, dsn, extra string) string {
	t.Helper()
	path := filepath.Join(dir, "agent.hcl")
	body := fmt.Sprintf("store {\n  driver = \"postgres\"\n  dsn = %q\n}\n", dsn) + extra
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestTwoAgentsShareOnePostgres runs two agents on one PostgreSQL store.
// Both see the same clusters; when one is killed in the middle of a cluster
// creation, the other takes its actions over once their lease expires.
func TestTwoAgentsShareOnePostgres(t *testing.T) {
	srv := pgtest.Start(t, 55451)
	config := func(dir string) string {
		return pgAgentConfig(t, dir, srv.DSN(), "workers {\n  node = 1\n  node_batch = 1\n  lease_seconds = 2\n}\n")
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

// TestHealthChecksSplitAcrossAgents: agents sharing a store do not both
// check a cluster. One agent holds the cluster's health claim; killed, it
// stops renewing it, the other agent takes the cluster over and restarts a
// node that dies afterwards; stopped gracefully, it hands its claims over
// at once.
func TestHealthChecksSplitAcrossAgents(t *testing.T) {
	srv := pgtest.Start(t, 55452)
	db, err := sql.Open("pgx", srv.DSN())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	config := func(dir string) string {
		return pgAgentConfig(t, dir, srv.DSN(), "orchestrator {\n  check_interval = \"300ms\"\n}\n")
	}
	engineID := func(dir string) string {
		b, err := os.ReadFile(filepath.Join(dir, "engine-id"))
		if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(b))
	}
	dirs := []string{t.TempDir(), t.TempDir()}
	agents := []*agentProc{startAgent(t, dirs[0], "-config", config(dirs[0])), startAgent(t, dirs[1], "-config", config(dirs[1]))}
	t.Cleanup(func() { killProcessesOf("split") })
	agents[0].webProfile("web")
	agents[0].waitAction(agents[0].createCluster("split", "web", 2, map[string]any{"config": map[string]any{"grove.restart": map[string]any{"delay": "0s"}}}))
	clusterID := agents[0].cluster("split").ID
	owner := func() string {
		var o string
		if err := db.QueryRow("SELECT owner FROM health_claims WHERE cluster_id = $1", clusterID).Scan(&o); err != nil && err != sql.ErrNoRows {
			t.Fatal(err)
		}
		return o
	}
	var holder int
	eventually(t, 10*time.Second, "an agent to claim the cluster's health checks", func() (bool, string) {
		o := owner()
		for i, d := range dirs {
			if o == engineID(d) {
				holder = i
				return true, o
			}
		}
		return false, fmt.Sprintf("owner %q", o)
	})
	other := agents[1-holder]
	otherID := engineID(dirs[1-holder])

	agents[holder].kill()
	victim := other.nodes(clusterID)[0]
	killNodeProcess(t, victim)
	eventually(t, 20*time.Second, "the other agent to take over and restart the dead node", func() (bool, string) {
		n, err := other.client.GetNode(t.Context(), victim.ID)
		if err != nil {
			return false, err.Error()
		}
		return n.Status == "ACTIVE" && n.Data["pid"] != victim.Data["pid"] && owner() == otherID, n.Status + " owner " + owner()
	})

	// A graceful stop releases the claim instead of leaving it to expire.
	back := startAgent(t, dirs[holder], "-config", config(dirs[holder]))
	other.stop()
	eventually(t, 10*time.Second, "the restarted agent to hold the claim after the other stopped", func() (bool, string) {
		return owner() == engineID(dirs[holder]), "owner " + owner()
	})
	back.stop()
	if o := owner(); o != "" {
		t.Errorf("a stopped agent left its claim behind: %q", o)
	}
}
