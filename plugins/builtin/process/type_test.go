package process

import (
	"strings"
	"testing"
)

// The error other platforms give names the rule and the platform, and
// points to what works there.
func TestUnsupportedPlatformError(t *testing.T) {
	err := unsupportedOn("windows")
	for _, want := range []string{"local.process runs only on Linux", "windows", "container.docker"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}
