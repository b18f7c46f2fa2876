// Package containertest gives tests a real container engine, a Docker
// Engine API endpoint: the one at DOCKER_HOST (Docker or Podman), or
// Podman's Docker API started by scripts/engine.sh, with Grove's demo
// images loaded. It also finds the containers Grove made for a cluster.
// Tests of the container.docker profile type and of clusters of containers
// use it; it has nothing to do with Grove's own engine (core/engine).
package containertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	containertypes "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/plugins/builtin/container"
)

var (
	once    sync.Once
	host    string
	onceErr error
)

func root() string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Join(filepath.Dir(file), "..", "..")
}

// Ensure returns a DOCKER_HOST with the demo image (container.DemoImage)
// loaded, starting the engine if needed, and sets DOCKER_HOST for the
// processes the test starts.
func Ensure() (string, error) {
	once.Do(func() {
		host = os.Getenv("DOCKER_HOST")
		if host == "" {
			out, err := exec.Command(filepath.Join(root(), "scripts", "engine.sh"), "up").CombinedOutput()
			if err != nil {
				onceErr = fmt.Errorf("start the container engine (needs podman and runc; .ci/run installs them): %v\n%s", err, out)
				return
			}
			for _, line := range strings.Split(string(out), "\n") {
				if v, ok := strings.CutPrefix(line, "DOCKER_HOST="); ok {
					host = v
				}
			}
			os.Setenv("DOCKER_HOST", host)
		}
		dir, err := os.MkdirTemp("", "grove-static")
		if err != nil {
			onceErr = err
			return
		}
		defer os.RemoveAll(dir)
		bin := filepath.Join(dir, "grove")
		if err := testbin.Build(bin, root(), "CGO_ENABLED=0"); err != nil {
			onceErr = fmt.Errorf("build a static grove: %w", err)
			return
		}
		for _, tag := range []string{container.DemoImage, DemoImageV2} {
			if err := container.ImportBinary(context.Background(), host, bin, tag, "demo-http"); err != nil {
				onceErr = err
				return
			}
		}
	})
	return host, onceErr
}

// DemoImageV2 is the same demo server under another tag, for image changes.
const DemoImageV2 = "localhost/grove-demo:v2"

// Require returns the engine's DOCKER_HOST for a test that cannot run
// without one: with none, the test fails in CI (CI set) and is skipped
// elsewhere, saying why.
func Require(t testing.TB) string {
	t.Helper()
	host, err := Ensure()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	return host
}

// ClusterContainers lists every container, running or not, that Grove made
// for the nodes of a cluster (by its grove.cluster label).
func ClusterContainers(ctx context.Context, c *client.Client, clusterID string) ([]containertypes.Summary, error) {
	res, err := c.ContainerList(ctx, client.ContainerListOptions{All: true,
		Filters: make(client.Filters).Add("label", "grove.cluster="+clusterID)})
	return res.Items, err
}
