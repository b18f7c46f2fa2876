package sdk_test

import (
	"os/exec"
	"strings"
	"testing"
)

// TestSDKImportsNoCore keeps the SDK free of Grove's engine: plugin authors
// import plugins/sdk and nothing that drags core/ in.
func TestSDKImportsNoCore(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "github.com/grovehq/grove/plugins/sdk/...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(pkg, "github.com/grovehq/grove/") && !strings.HasPrefix(pkg, "github.com/grovehq/grove/plugins/sdk") &&
			pkg != "github.com/grovehq/grove/plugins/proto" {
			t.Errorf("plugins/sdk depends on %s", pkg)
		}
	}
}
