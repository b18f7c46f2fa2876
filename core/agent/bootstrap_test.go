package agent

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/internal/testbin"
)

// lockedBuffer is a log sink several goroutines write.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func testPlugin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "testplugin")
	if err := testbin.Build(bin, "../../plugins/host/testdata/testplugin"); err != nil {
		t.Fatal(err)
	}
	return bin
}

func request(t *testing.T, method, url, token, body string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest(method, url, strings.NewReader(body))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestBootstrapToken: an agent outside dev mode makes an admin token at its
// first start and writes the secret to <data_dir>/bootstrap-token, 0600;
// requests need a token even from loopback; the next start makes none; the
// log, at trace level, never holds a secret it was sent or made. In dev mode
// no token is made and loopback callers need none.
func TestBootstrapToken(t *testing.T) {
	plugin := testPlugin(t)
	dir := filepath.Join(t.TempDir(), "data")
	var logs lockedBuffer
	log := hclog.New(&hclog.LoggerOptions{Level: hclog.Trace, Output: &logs})
	start := func(dev bool) *Agent {
		t.Helper()
		a, err := Start(context.Background(), &Config{Bind: "127.0.0.1:0", DataDir: dir, Builtin: []string{plugin}, Dev: dev}, "test", log)
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	a := start(false)
	path := filepath.Join(dir, BootstrapTokenFile)
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("%s has mode %o, want 600", path, info.Mode().Perm())
	}
	b, _ := os.ReadFile(path)
	boot := strings.TrimSpace(string(b))
	if !engine.WellFormedToken(boot) {
		t.Fatalf("the bootstrap file holds %q, not a token", boot)
	}
	if code, _ := request(t, http.MethodGet, a.Addr+"/v1/clusters", "", ""); code != http.StatusUnauthorized {
		t.Errorf("no token from loopback outside dev mode: %d, want 401", code)
	}
	code, body := request(t, http.MethodPost, a.Addr+"/v1/tokens", boot, `{"token": {"name": "ci", "project": "p", "role": "member"}}`)
	if code != http.StatusCreated {
		t.Fatalf("create a token with the bootstrap token: %d %s", code, body)
	}
	_, made, _ := strings.Cut(body, `"secret":"`)
	made, _, _ = strings.Cut(made, `"`)
	if code, body := request(t, http.MethodPost, a.Addr+"/v1/profiles", made, `{"profile": {"name": "x", "spec": {"type": "grove.noop", "version": "1.0"}}}`); code != http.StatusCreated {
		t.Errorf("a member creates a profile: %d %s", code, body)
	}
	bad := "grove_" + strings.Repeat("Z", 43)
	request(t, http.MethodGet, a.Addr+"/v1/clusters", bad, "")
	request(t, http.MethodGet, a.Addr+"/v1/tokens", made, "") // 403
	a.Close()

	if !strings.Contains(logs.String(), path) {
		t.Errorf("the log does not name the bootstrap file %s:\n%s", path, logs.String())
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	a = start(false)
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a second start with tokens in the store made another bootstrap token: %v", err)
	}
	if code, _ := request(t, http.MethodGet, a.Addr+"/v1/clusters", boot, ""); code != http.StatusOK {
		t.Errorf("the bootstrap token after a restart: %d", code)
	}
	a.Close()

	a = start(true)
	if code, _ := request(t, http.MethodGet, a.Addr+"/v1/clusters", "", ""); code != http.StatusOK {
		t.Errorf("dev mode, no token from loopback: %d, want 200", code)
	}
	a.Close()

	for name, secret := range map[string]string{"bootstrap": boot, "created": made, "bad": bad} {
		if strings.Contains(logs.String(), secret) || strings.Contains(logs.String(), secret[len("grove_"):]) {
			t.Errorf("the agent log holds the %s token's secret", name)
		}
	}
}
