// Package pyharness runs the Python harnesses that stand Debian's
// OpenStack services up for tests (internal/novatest, internal/octaviatest):
// a script run by Debian's python3 that prints KEY=VALUE lines and then a
// ready line on its stdout, logs to its stderr, and exits on SIGTERM or
// when its parent is gone.
package pyharness

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/internal/proctest"
)

// Python is the interpreter the Debian packages are installed for; a pyenv
// or virtualenv python3 on PATH does not see them.
const Python = "/usr/bin/python3"

// Available says why a harness of service cannot run here (Python or one
// of the Debian packages missing, with the command that installs them),
// or nil when it can.
func Available(service, packages string) error {
	if _, err := os.Stat(Python); err != nil {
		return fmt.Errorf("the local %s needs Debian's %s: %w", service, Python, err)
	}
	var missing []string
	for _, p := range strings.Fields(packages) {
		out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", p).Output()
		if err != nil || !strings.Contains(string(out), "install ok installed") {
			missing = append(missing, p)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("the local %s needs the Debian packages %s; install them with: apt-get install -y --no-install-recommends %s",
			service, strings.Join(missing, ", "), packages)
	}
	return nil
}

// Need skips the test when missing (an Available answer) is not nil;
// under CI (CI set, as CI=true) it fails instead, since CI installs the
// packages (.ci/run).
func Need(t testing.TB, missing error) {
	t.Helper()
	if missing == nil {
		return
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%v (.ci/run installs them)", missing)
	}
	t.Skip(missing)
}

// Proc is a running harness.
type Proc struct {
	// Vars are the KEY=VALUE lines it printed before its ready line.
	Vars map[string]string
	cmd  *exec.Cmd
	done chan struct{}
}

// Start runs Python with args in dir, its stderr in dir/harness.log, and
// returns once the harness prints a line starting with readyKey. name
// ("Nova") and log (the service's own log file, named when the wait runs
// out) are for error messages; ctx bounds the wait.
func Start(ctx context.Context, name, dir string, args []string, readyKey, log string) (*Proc, error) {
	logf, err := os.Create(filepath.Join(dir, "harness.log"))
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(Python, args...)
	cmd.Dir = dir
	cmd.Stderr = logf
	cmd.Env = append(os.Environ(), "PYTHONDONTWRITEBYTECODE=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start the %s harness: %w", name, err)
	}
	p := &Proc{cmd: cmd, done: make(chan struct{}), Vars: map[string]string{}}
	ready := make(chan error, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), "=")
			if k == readyKey {
				ready <- nil
				break
			}
			p.Vars[k] = v
		}
		// Drain so the harness never blocks on a full pipe.
		_, _ = io.Copy(io.Discard, out)
		err := cmd.Wait()
		close(p.done)
		ready <- fmt.Errorf("the %s harness exited before it was ready (%v): %s", name, err, Tail(filepath.Join(dir, "harness.log")))
	}()
	select {
	case err := <-ready:
		if err != nil {
			return nil, err
		}
	case <-ctx.Done():
		p.Stop()
		return nil, fmt.Errorf("the %s harness was not ready: %w; see %s", name, ctx.Err(), filepath.Join(dir, log))
	}
	return p, nil
}

// Stop ends the harness and waits for it to exit: SIGTERM, then SIGKILL
// after 10 seconds. A nil Proc is nothing to stop.
func (p *Proc) Stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// Pid is the harness process's id.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Tail is the end of a log file, for error messages.
func Tail(path string) string {
	b, _ := os.ReadFile(path)
	s := strings.TrimSpace(string(b))
	if len(s) > 2000 {
		s = "..." + s[len(s)-2000:]
	}
	return s
}

// CheckDiesWithParent starts script under Python from a shell, in the
// background with --die-with-parent and --remove-state-on-exit, then kills
// the shell, and fails t unless the harness exits and removes its state
// directory: a harness must not outlive what started it, nor leave its
// state behind.
func CheckDiesWithParent(ctx context.Context, t *testing.T, script string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "state")
	sh := exec.Command("/bin/sh", "-c", `"$0" "$1" --state-dir "$2" --die-with-parent --remove-state-on-exit >"$2.out" 2>&1 & echo $! > "$2.pid"; exec sleep 600`,
		Python, script, dir)
	if err := sh.Start(); err != nil {
		t.Fatal(err)
	}
	var child int
	waitFor(ctx, t, "the harness's env file", func() bool {
		b, _ := os.ReadFile(dir + ".pid")
		child, _ = strconv.Atoi(strings.TrimSpace(string(b)))
		_, err := os.Stat(filepath.Join(dir, "env"))
		return child > 0 && err == nil
	})
	t.Cleanup(func() {
		if p, err := os.FindProcess(child); err == nil {
			_ = p.Kill()
		}
	})
	_ = sh.Process.Kill()
	_ = sh.Wait()
	waitFor(ctx, t, "the harness to exit with its parent gone", func() bool { return !proctest.Live(child) })
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("state directory %s is still there (%v)", dir, err)
	}
}

func waitFor(ctx context.Context, t *testing.T, what string, ok func() bool) {
	t.Helper()
	for !ok() {
		select {
		case <-ctx.Done():
			t.Fatalf("timed out waiting for %s", what)
		case <-time.After(100 * time.Millisecond):
		}
	}
}
