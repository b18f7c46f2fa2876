package orchestrator_test

import (
	"strings"
	"testing"

	"github.com/grovehq/grove/internal/depgraph"
)

// forbidden lists what a pure package must not depend on, directly or
// not, with the reason: the decisions in core/orchestrator and the types
// in core/model are functions of their inputs, tested without a store, an
// engine, a server or plugin processes.
var forbidden = []struct{ prefix, why string }{
	{"github.com/grovehq/grove/core/store", "the store does I/O"},
	{"github.com/grovehq/grove/core/engine", "the engine applies decisions; it does not make them"},
	{"github.com/grovehq/grove/core/server", "the HTTP server is a caller, not a dependency"},
	{"github.com/grovehq/grove/core/agent", "the agent wires the processes together"},
	{"github.com/grovehq/grove/plugins/host", "the plugin host runs plugin processes"},
	{"github.com/grovehq/grove/plugins/builtin", "built-in plugins run under the plugin host"},
	{"database/sql", "a database driver interface"},
	{"modernc.org/sqlite", "a database driver"},
	{"github.com/mattn/go-sqlite3", "a database driver"},
	{"github.com/jackc/pgx", "a database driver"},
	{"github.com/lib/pq", "a database driver"},
	{"github.com/pressly/goose", "database migrations"},
}

// TestPurePackagesImportNoIO keeps core/orchestrator and core/model pure:
// they may import the standard library, api/ and each other, but nothing
// that stores, serves or runs plugins.
func TestPurePackagesImportNoIO(t *testing.T) {
	g, err := depgraph.Load("github.com/grovehq/grove/core/orchestrator/...", "github.com/grovehq/grove/core/model/...")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range g.Packages() {
		for _, f := range forbidden {
			if pkg == f.prefix || strings.HasPrefix(pkg, f.prefix+"/") {
				t.Errorf("a pure package depends on %s (%s): %s", pkg, f.why, g.Chain(pkg))
			}
		}
	}
}
