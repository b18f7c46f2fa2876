//go:build linux

package process

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
)

// TestAdoptRefusesSnapshot: Senlin's snapshot flag asks for something a
// process does not have, and is refused saying so rather than ignored.
func TestAdoptRefusesSnapshot(t *testing.T) {
	d := &Driver{Dir: t.TempDir()}
	_, err := d.Adopt(context.Background(), sdk.AdoptRequest{Type: "local.process", Version: "1.0", Identity: strconv.Itoa(os.Getpid()),
		Node: sdk.Node{ID: "n"}, Snapshot: true})
	if err == nil || !strings.Contains(err.Error(), "nothing to snapshot") {
		t.Errorf("adopt with snapshot: %v", err)
	}
}
