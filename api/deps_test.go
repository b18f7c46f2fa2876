package api_test

import (
	"strings"
	"testing"

	"github.com/grovehq/grove/internal/depgraph"
)

// TestAPIImportsNoCore keeps api/ a client's package: the CLI, the
// Terraform provider and other programs import it to talk to an agent, so
// it must not drag in the engine, the store, the plugin host or their
// database drivers. The only Grove packages it may share are the public
// plugin contract (plugins/sdk and its protobuf types), which is itself
// held free of core/ by TestSDKImportsNoCore.
func TestAPIImportsNoCore(t *testing.T) {
	g, err := depgraph.Load("github.com/grovehq/grove/api/...")
	if err != nil {
		t.Fatal(err)
	}
	for _, pkg := range g.Packages() {
		rest, ok := strings.CutPrefix(pkg, "github.com/grovehq/grove/")
		if !ok {
			continue
		}
		switch {
		case rest == "api" || strings.HasPrefix(rest, "api/"),
			rest == "plugins/sdk" || strings.HasPrefix(rest, "plugins/sdk/"):
		default:
			t.Errorf("api/ depends on %s: %s", pkg, g.Chain(pkg))
		}
	}
}
