package containertest

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/plugins/builtin/container"
)

// StartEngines starts n Podman services of the test's own with
// scripts/engine.sh, each with its own socket and storage (so each is a
// host of its own to the container driver), loads the demo image into each
// and stops them when the test ends, by the pids the script recorded. It
// returns their DOCKER_HOSTs. Without podman and runc the test is skipped
// (failed in CI).
func StartEngines(t testing.TB, n int) []string {
	t.Helper()
	// The demo image is a static grove; Go's build cache makes a second
	// build of it cheap.
	bin := filepath.Join(t.TempDir(), "grove")
	if err := testbin.Build(bin, root(), "CGO_ENABLED=0"); err != nil {
		t.Fatalf("build a static grove: %v", err)
	}
	var hosts []string
	for i := range n {
		// Under /tmp, not $TMPDIR: Podman refuses a runroot longer than 50
		// characters, and CI's run-unique TMPDIR is already long.
		dir, err := os.MkdirTemp("/tmp", fmt.Sprintf("ge%d-", i))
		if err != nil {
			t.Fatal(err)
		}
		script := filepath.Join(root(), "scripts", "engine.sh")
		env := append(os.Environ(), "GROVE_ENGINE_DIR="+dir)
		t.Cleanup(func() {
			pid := 0
			if b, err := os.ReadFile(filepath.Join(dir, "podman.pid")); err == nil {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			down := exec.Command(script, "down")
			down.Env = env
			_ = down.Run()
			// Podman mounts its storage's overlay directory on itself;
			// once the service is gone, unmount it to remove the rest.
			for deadline := time.Now().Add(20 * time.Second); pid > 0 && time.Now().Before(deadline); {
				if p, err := os.FindProcess(pid); err != nil || p.Signal(syscall.Signal(0)) != nil {
					break
				}
				time.Sleep(50 * time.Millisecond)
			}
			unmount(filepath.Join(dir, "root", "overlay"))
			_ = os.RemoveAll(dir)
		})
		up := exec.Command(script, "up")
		up.Env = env
		out, err := up.CombinedOutput()
		if err != nil {
			msg := fmt.Sprintf("start a container engine (needs podman and runc; .ci/run installs them): %v\n%s", err, out)
			if os.Getenv("CI") != "" {
				t.Fatal(msg)
			}
			t.Skip(msg)
		}
		var h string
		for _, line := range strings.Split(string(out), "\n") {
			if v, ok := strings.CutPrefix(line, "DOCKER_HOST="); ok {
				h = v
			}
		}
		if h == "" {
			t.Fatalf("engine.sh up printed no DOCKER_HOST:\n%s", out)
		}
		if err := container.ImportBinary(context.Background(), h, bin, container.DemoImage, "demo-http"); err != nil {
			t.Fatalf("load the demo image into %s: %v", h, err)
		}
		hosts = append(hosts, h)
	}
	return hosts
}
