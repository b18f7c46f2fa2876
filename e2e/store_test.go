package e2e

import (
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/store/postgres/pgtest"
)

// apiErr runs a request that must fail and returns its API error.
func apiErr(t *testing.T, a *agentProc, method, path string, body any) *api.Error {
	t.Helper()
	_, err := a.do(method, path, body)
	var ae *api.Error
	if !errors.As(err, &ae) {
		t.Fatalf("%s %s: %v; want an API error", method, path, err)
	}
	return ae
}

// TestLookupsAreLiteral: ids, names and short ids are compared literally.
// Before, `GET /v1/clusters/_` returned the only cluster, `DELETE
// /v1/clusters/%25` deleted it, and an empty profile_id picked the only
// profile.
func TestLookupsAreLiteral(t *testing.T) {
	a := startAgent(t, t.TempDir())
	noopProfile(a, "only", 0)
	a.waitAction(a.createCluster("solo", "only", 0, nil))
	cl := a.cluster("solo")

	for _, tc := range []struct {
		method, path string
		body         any
		status       int
		says         []string
	}{
		{http.MethodGet, "/v1/clusters/_", nil, 404, []string{"The cluster '_' could not be found."}},
		{http.MethodGet, "/v1/clusters/s_lo", nil, 404, nil},
		{http.MethodGet, "/v1/clusters/" + cl.ID[:5], nil, 404, nil},
		{http.MethodDelete, "/v1/clusters/%25", nil, 400, []string{`The cluster id, name or short id "%" is not valid`, "'%'"}},
		{http.MethodDelete, "/v1/clusters/_", nil, 404, nil},
		{http.MethodGet, "/v1/profiles/%2A", nil, 400, []string{"profile"}},
		{http.MethodGet, "/v1/profiles/_", nil, 404, nil},
		{http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "n1", "profile_id": ""}}, 400, []string{"profile_id:", "required"}},
		{http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "n1", "profile_id": "%"}}, 400, []string{"profile_id:", "not valid"}},
		{http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "n1", "profile_id": "_"}}, 400, []string{"profile_id:", "could not be found"}},
		{http.MethodPost, "/v1/nodes", map[string]any{"node": map[string]any{"name": "n1", "profile_id": "only", "cluster_id": "%"}}, 400, []string{"cluster_id:"}},
	} {
		t.Run(tc.method+" "+tc.path, func(t *testing.T) {
			ae := apiErr(t, a, tc.method, tc.path, tc.body)
			if ae.Status != tc.status {
				t.Errorf("status %d (%s), want %d", ae.Status, ae.Message, tc.status)
			}
			for _, w := range tc.says {
				if !strings.Contains(ae.Message, w) {
					t.Errorf("message %q does not say %q", ae.Message, w)
				}
			}
		})
	}
	// Nothing was deleted or created, and real short ids still work.
	if got, err := a.client.GetCluster(t.Context(), cl.ID[:6]); err != nil || got.ID != cl.ID || got.Status != "ACTIVE" {
		t.Errorf("the cluster after the refused requests: %v, %v", got, err)
	}
	if ns, err := a.client.ListNodes(t.Context(), nil); err != nil || len(ns) != 0 {
		t.Errorf("nodes after refused creates: %d, %v", len(ns), err)
	}
	// The agent said which store it opened, and at which schema version.
	if log := a.logText(); !strings.Contains(log, "store opened") || !schemaVersionRE.MatchString(log) || !strings.Contains(log, filepath.Join(a.dataDir, "grove.db")) {
		t.Errorf("the agent log does not name the store and its schema version:\n%s", tail(log, 20))
	}
}

// TestClusterNamesUniqueUnderConcurrency: ten creates of one name at once
// give one 202 and nine 409s. The check before the write lets several pass;
// the store's unique index stops all but one, with the same answer.
func TestClusterNamesUniqueUnderConcurrency(t *testing.T) {
	backends := map[string]func(t *testing.T) *agentProc{
		"sqlite": func(t *testing.T) *agentProc { return startAgent(t, t.TempDir()) },
		"postgres": func(t *testing.T) *agentProc {
			srv := pgtest.Start(t, 55461)
			dir := t.TempDir()
			return startAgent(t, dir, "-config", pgAgentConfig(t, dir, srv.DSN(), ""))
		},
	}
	for name, start := range backends {
		t.Run(name, func(t *testing.T) {
			a := start(t)
			noopProfile(a, "p", 0)
			for round := range 3 {
				clusterName := fmt.Sprintf("dup%d", round)
				const n = 10
				statuses := make([]int, n)
				messages := make([]string, n)
				var wg sync.WaitGroup
				ready := make(chan struct{})
				for i := range n {
					wg.Add(1)
					go func() {
						defer wg.Done()
						<-ready
						r, err := a.do(http.MethodPost, "/v1/clusters", map[string]any{"cluster": map[string]any{"name": clusterName, "profile_id": "p", "desired_capacity": 0}})
						var ae *api.Error
						switch {
						case errors.As(err, &ae):
							statuses[i], messages[i] = ae.Status, ae.Type+": "+ae.Message
						case err != nil:
							messages[i] = err.Error()
						default:
							statuses[i] = r.Status
						}
					}()
				}
				close(ready)
				wg.Wait()
				count := map[int]int{}
				for i, s := range statuses {
					count[s]++
					want := fmt.Sprintf(`ResourceInUse: A cluster named %q already exists; names must be unique within a project.`, clusterName)
					if s == http.StatusConflict && messages[i] != want {
						t.Errorf("conflict answered %q, want %q", messages[i], want)
					}
				}
				if count[http.StatusAccepted] != 1 || count[http.StatusConflict] != n-1 {
					t.Errorf("round %d: answers %v (%q); want one 202 and %d 409s", round, count, messages, n-1)
				}
				var list struct {
					Clusters []api.Cluster `json:"clusters"`
				}
				a.mustDo(http.MethodGet, "/v1/clusters?name="+clusterName, nil, &list)
				if len(list.Clusters) != 1 {
					t.Errorf("round %d: %d clusters named %s; want 1", round, len(list.Clusters), clusterName)
				}
			}
		})
	}
}

// TestDataDirIsPrivate: the data dir and the store are the agent user's
// alone, the SQLite -wal and -shm files included.
func TestDataDirIsPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "grove")
	a := startAgent(t, t.TempDir(), "-data-dir", dir)
	noopProfile(a, "p", 0)
	for path, want := range map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "grove.db"): 0o600,
		filepath.Join(dir, "grove.db-wal"): 0o600, filepath.Join(dir, "grove.db-shm"): 0o600} {
		info, err := os.Stat(path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if got := info.Mode().Perm(); got != want {
			t.Errorf("%s has mode %o, want %o", path, got, want)
		}
	}
}

// TestAgentRefusesAnEmptyStoreFile: an agent whose store file is empty (a
// failed copy, a full disk) does not start on a fresh store, which would
// orphan the nodes the lost one tracked; it says what to do.
func TestAgentRefusesAnEmptyStoreFile(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "grove.db")
	if err := os.WriteFile(db, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.CommandContext(t.Context(), groveBin, "agent", "-dev", "-bind", "127.0.0.1:0", "-data-dir", dir).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		t.Fatalf("the agent did not fail: %v\n%s", err, out)
	}
	for _, w := range []string{db, "is empty (0 bytes)", "restore the file from a backup"} {
		if !strings.Contains(string(out), w) {
			t.Errorf("the agent's answer does not say %q:\n%s", w, out)
		}
	}
	if info, err := os.Stat(db); err != nil || info.Size() != 0 {
		t.Errorf("the empty store file was changed: %v, %v", info, err)
	}
}

// schemaVersionRE finds the schema version in the agent's "store opened" line.
var schemaVersionRE = regexp.MustCompile(`store opened.*schema_version=[1-9][0-9]*`)
