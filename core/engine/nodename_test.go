package engine_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/engine"
)

// TestNodeNameFormatRefused: a node.name.format that would give nodes
// names no reference can name is refused on create and on update, with the
// setting named, and an update refused leaves the stored format alone.
func TestNodeNameFormatRefused(t *testing.T) {
	h := newHarness(t, nil)
	h.profile("p")
	bad := map[string]any{"node.name.format": "%s*?/../ x\x00$255R$255R"}
	refused := func(what string, err error) {
		t.Helper()
		var ee *engine.Error
		if !errors.As(err, &ee) || ee.Status != http.StatusBadRequest || !strings.Contains(ee.Message, "config.node.name.format: ") {
			t.Fatalf("%s: got %v, want a 400 naming config.node.name.format", what, err)
		}
	}
	zero := 0
	_, _, err := h.eng.CreateCluster(h.ctx(), caller, engine.ClusterCreate{Name: "c0", Profile: "p", DesiredCapacity: &zero, Config: bad})
	refused("create", err)

	cl := h.create(engine.ClusterCreate{Name: "c1", Profile: "p", DesiredCapacity: &zero, Config: map[string]any{"node.name.format": "web-$3I"}})
	_, _, err = h.eng.UpdateCluster(h.ctx(), caller, cl.ID, engine.ClusterUpdate{Config: map[string]any{"node.name.format": "web-$256R"}})
	refused("update", err)
	got, err := h.store.FindCluster(h.ctx(), caller.Project, cl.ID)
	if err != nil {
		t.Fatal(err)
	}
	if f := got.Config["node.name.format"]; f != "web-$3I" {
		t.Errorf("node.name.format is %q after a refused update, want web-$3I", f)
	}
}
