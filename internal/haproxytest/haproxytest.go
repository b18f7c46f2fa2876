// Package haproxytest starts a real HAProxy (Debian's haproxy package) for
// tests: in the foreground, as a child the test stops by its pid, with an
// admin runtime-API socket and an HTTP frontend on 127.0.0.1 in front of
// one empty backend.
package haproxytest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// Backend is the name of the frontend's backend.
const Backend = "app"

// HAProxy is a running haproxy.
type HAProxy struct {
	// Socket is the admin runtime API's unix socket.
	Socket string
	// Frontend is the HTTP frontend's host:port on 127.0.0.1.
	Frontend string
	// Log is the file haproxy's output goes to.
	Log string
	cmd *exec.Cmd
}

// Start starts haproxy and stops it when the test ends; the test is
// skipped when haproxy is not installed. extra is added to the backend's
// section (such as a static server).
func Start(t testing.TB, extra ...string) *HAProxy {
	t.Helper()
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy is not installed (apt-get install haproxy)")
	}
	dir := t.TempDir()
	// A unix socket path is limited to about 100 bytes; TempDir's can be
	// longer, so the socket gets a short directory of its own.
	sockDir, err := os.MkdirTemp("", "hap")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(sockDir) })
	h := &HAProxy{Socket: filepath.Join(sockDir, "admin.sock"), Frontend: freeAddr(t), Log: filepath.Join(dir, "haproxy.log")}
	cfg := fmt.Sprintf(`global
  stats socket %s mode 600 level admin
  pidfile %s
defaults
  mode http
  timeout connect 2s
  timeout client 30s
  timeout server 30s
frontend web
  bind %s
  default_backend %s
backend %s
  balance roundrobin
`, h.Socket, filepath.Join(dir, "haproxy.pid"), h.Frontend, Backend, Backend)
	for _, l := range extra {
		cfg += "  " + l + "\n"
	}
	path := filepath.Join(dir, "haproxy.cfg")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(h.Log)
	if err != nil {
		t.Fatal(err)
	}
	// -db keeps haproxy in the foreground, a child this test owns.
	h.cmd = exec.Command(bin, "-db", "-f", path)
	h.cmd.Stdout, h.cmd.Stderr = logf, logf
	if err := h.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = h.cmd.Wait(); logf.Close(); close(done) }()
	t.Cleanup(func() {
		_ = h.cmd.Process.Kill()
		<-done
	})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for {
		if c, err := net.Dial("unix", h.Socket); err == nil {
			c.Close()
			if c, err := net.Dial("tcp", h.Frontend); err == nil {
				c.Close()
				return h
			}
		}
		select {
		case <-done:
			b, _ := os.ReadFile(h.Log)
			t.Fatalf("haproxy exited: %s", b)
		case <-ctx.Done():
			b, _ := os.ReadFile(h.Log)
			t.Fatalf("haproxy did not answer within 20s: %s", b)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// Pid is haproxy's process id.
func (h *HAProxy) Pid() int { return h.cmd.Process.Pid }

func freeAddr(t testing.TB) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
