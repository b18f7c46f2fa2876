//go:build unix

package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
)

// A node's runtime directory is named by its id and removed on delete: an
// id that is not one plain path element must not name a directory outside
// the driver's nodes directory, least of all one to remove.
func TestNodeDirConfinedToRuntimeDir(t *testing.T) {
	base := t.TempDir()
	d := &Driver{Dir: filepath.Join(base, "runtime")}
	keep := []string{filepath.Join(base, "runtime", "keep"), filepath.Join(base, "keep")}
	os.MkdirAll(filepath.Join(base, "runtime", "nodes"), 0o755)
	for _, f := range keep {
		os.WriteFile(f, []byte("x"), 0o644)
	}
	spec := sdk.Spec{Type: TypeName, Version: "1.0", Properties: map[string]any{"command": []any{"true"}, "stop_timeout": 1}}
	for _, id := range []string{"..", "../..", "a/../..", "x/y", "", "/abs"} {
		n := sdk.Node{ID: id, Name: "n"}
		for _, r := range d.Delete(context.Background(), spec, []sdk.Node{n}) {
			if r.Err != nil {
				t.Errorf("delete of node %q: %v", id, r.Err)
			}
		}
		for _, f := range keep {
			if _, err := os.Stat(f); err != nil {
				t.Fatalf("deleting node %q removed %s", id, f)
			}
		}
		res := d.Create(context.Background(), spec, []sdk.Node{n})
		if res[0].Err == nil || !strings.Contains(res[0].Err.Error(), "cannot name a runtime directory") {
			t.Errorf("create of node %q: want a refusal of its id, got %v", id, res[0].Err)
		}
	}
}
