package host_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/internal/proctest"
	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/plugins/host"
	"github.com/grovehq/grove/plugins/sdk"
)

var groveBin, testPlugin string

func TestMain(m *testing.M) {
	dir, _ := os.MkdirTemp("", "grove-host-test")
	groveBin = filepath.Join(dir, "grove")
	testPlugin = filepath.Join(dir, "testplugin")
	for out, pkg := range map[string]string{groveBin: "../..", testPlugin: "./testdata/testplugin"} {
		if err := testbin.Build(out, pkg); err != nil {
			panic(err)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

func builtin() []string { return []string{groveBin, "plugin", "serve"} }

func TestStartDescribesComponents(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	defer h.Close()
	if err := h.Start(context.Background(), host.Config{Name: "builtin", Command: builtin()}); err != nil {
		t.Fatal(err)
	}
	c, ok := h.Component("profile", "local.process")
	if !ok || !c.NeedsPort || c.Schema["command"] == nil || !c.Schema["command"].Required {
		t.Fatalf("local.process component: %+v", c)
	}
	d, ok := h.Component("policy", "senlin.policy.deletion")
	if !ok || !d.Singleton || d.DefaultPriority != 400 || !d.WantsCheck("BEFORE", "CLUSTER_SCALE_IN") || d.WantsCheck("AFTER", "CLUSTER_SCALE_IN") {
		t.Fatalf("deletion component: %+v", d)
	}
	st := h.Statuses()
	if len(st) != 1 || st[0].State != "running" || st[0].PID == 0 {
		t.Fatalf("statuses: %+v", st)
	}
	if _, _, err := h.Client(context.Background(), "profile", "acme.cloud.server"); err == nil || !strings.Contains(err.Error(), "no plugin provides") {
		t.Fatalf("unknown type: %v", err)
	}
}

func TestChecksumMismatchRefused(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	defer h.Close()
	wrong := strings.Repeat("0", 64)
	err := h.Start(context.Background(), host.Config{Name: "third", Command: builtin(), SHA256: wrong})
	if err == nil || !strings.Contains(err.Error(), "checksum mismatch") || !strings.Contains(err.Error(), wrong) {
		t.Fatalf("want a checksum mismatch naming both sums, got %v", err)
	}
	if len(h.Statuses()) != 0 {
		t.Fatal("a refused plugin must not be registered")
	}
}

func TestDuplicateTypeNeedsOverride(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	defer h.Close()
	ctx := context.Background()
	if err := h.Start(ctx, host.Config{Name: "builtin", Command: builtin()}); err != nil {
		t.Fatal(err)
	}
	err := h.Start(ctx, host.Config{Name: "copy", Command: builtin()})
	if err == nil || !strings.Contains(err.Error(), "already provided by plugin builtin") || !strings.Contains(err.Error(), "override") {
		t.Fatalf("want a refusal that explains override, got %v", err)
	}
	if err := h.Start(ctx, host.Config{Name: "copy", Command: builtin(), Override: true}); err != nil {
		t.Fatal(err)
	}
	if c, _ := h.Component("profile", "local.process"); c.Plugin != "copy" {
		t.Fatalf("override: local.process served by %s", c.Plugin)
	}
}

func TestBinaryThatIsNotAPlugin(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	defer h.Close()
	err := h.Start(context.Background(), host.Config{Name: "echo", Command: []string{"/bin/echo", "hello"}})
	if err == nil {
		t.Fatal("a binary that prints something else than the handshake must be refused")
	}
}

func TestNegotiate(t *testing.T) {
	if v, err := sdk.Negotiate("profile", []string{"1", "2"}, []string{"2", "3"}); err != nil || v != "2" {
		t.Fatalf("Negotiate = %q %v", v, err)
	}
	if v, _ := sdk.Negotiate("profile", []string{"1", "2", "10"}, []string{"2", "10"}); v != "10" {
		t.Fatalf("highest common version is numeric: %q", v)
	}
	_, err := sdk.Negotiate("policy", []string{"1"}, []string{"2"})
	if err == nil || !strings.Contains(err.Error(), "[1]") || !strings.Contains(err.Error(), "[2]") {
		t.Fatalf("a mismatch names both sides: %v", err)
	}
}

func TestIncompatibleAPIVersionRefused(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	defer h.Close()
	err := h.Start(context.Background(), host.Config{Name: "future", Command: []string{testPlugin}, Settings: map[string]any{"profile_api": "99"}})
	if err == nil || !strings.Contains(err.Error(), "the host speaks [1 2 3], the plugin speaks [99]") {
		t.Fatalf("want a refusal naming both versions, got %v", err)
	}
}

// A plugin built with an SDK that speaks policy API 1 sends its decisions
// as JSON; one that speaks 2 sends them typed. The engine must read the same
// data from both.
func TestPolicyDecisionsAcrossPolicyAPIVersions(t *testing.T) {
	req := sdk.CheckRequest{
		Policy: sdk.Spec{ID: "pol", Name: "del", Type: "senlin.policy.deletion", Version: "1.1",
			Properties: map[string]any{"criteria": "OLDEST_FIRST", "grace_period": 3}},
		Phase: "BEFORE", Action: sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 1}},
		Cluster: sdk.Cluster{DesiredCapacity: 2, MaxSize: -1, Nodes: []sdk.ClusterNode{{ID: "a", Status: "ACTIVE", CreatedAt: 1}, {ID: "b", Status: "ACTIVE", CreatedAt: 2}}},
	}
	want := map[string]any{"deletion": map[string]any{"count": float64(1), "candidates": []any{"a"},
		"destroy_after_deletion": true, "grace_period": float64(3), "reduce_desired_capacity": true}}
	for _, api := range []string{"1", "2"} {
		t.Run("policy API "+api, func(t *testing.T) {
			h := host.New(hclog.NewNullLogger(), t.TempDir())
			defer h.Close()
			ctx := context.Background()
			if err := h.Start(ctx, host.Config{Name: "p" + api, Command: []string{testPlugin}, Settings: map[string]any{"policy_api": api}}); err != nil {
				t.Fatal(err)
			}
			c, _, err := h.Client(ctx, "policy", "senlin.policy.deletion")
			if err != nil {
				t.Fatal(err)
			}
			res, err := c.Check(ctx, req)
			if err != nil || res.Refuse != "" {
				t.Fatalf("check: %v %q", err, res.Refuse)
			}
			if !reflect.DeepEqual(res.Data, want) {
				t.Fatalf("data = %#v\nwant %#v", res.Data, want)
			}
			// Profile API 3 (node adoption) is the newest both speak.
			if st := h.Statuses(); len(st) != 1 || st[0].APIVersions["policy"] != api || st[0].APIVersions["profile"] != sdk.ProfileAPIAdopt {
				t.Errorf("status shows API versions %v, want policy %s and profile %s", st[0].APIVersions, api, sdk.ProfileAPIAdopt)
			}
		})
	}
}

func TestIncompatibleHandshakeRefused(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	defer h.Close()
	err := h.Start(context.Background(), host.Config{Name: "old", Command: []string{testPlugin}, Settings: map[string]any{"handshake": "99"}})
	if err == nil || !strings.Contains(err.Error(), "Plugin version: 99") || !strings.Contains(err.Error(), fmt.Sprintf("this agent speaks %d", sdk.HandshakeVersion)) ||
		!strings.Contains(err.Error(), "plugin handshake") {
		t.Fatalf("want a refusal naming the handshake and both versions, got %v", err)
	}
}

func TestStdoutBeforeHandshakeDiagnosed(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	defer h.Close()
	err := h.Start(context.Background(), host.Config{Name: "chatty", Command: []string{testPlugin}, Settings: map[string]any{"print_stdout": "true"}})
	if err == nil || !strings.Contains(err.Error(), "printed to stdout before the go-plugin handshake") || !strings.Contains(err.Error(), "hello from a chatty init") {
		t.Fatalf("want a diagnosis naming the stray output, got %v", err)
	}
}

// syncBuffer is an agent log a test can read while plugins write to it.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A plugin's log lines reach the agent's log under the plugin's name, and
// its per-plugin log file.
func TestPluginLogsReachAgentLogAndFile(t *testing.T) {
	var agentLog syncBuffer
	dataDir := t.TempDir()
	h := host.New(hclog.New(&hclog.LoggerOptions{Name: "agent", Level: hclog.Debug, Output: &agentLog}), dataDir)
	defer h.Close()
	const msg = "hello from the testplugin log"
	if err := h.Start(context.Background(), host.Config{Name: "talker", Command: []string{testPlugin}, Settings: map[string]any{"log": msg}}); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dataDir, "plugins", "talker", "plugin.log")
	var line string
	for deadline := time.Now().Add(10 * time.Second); ; {
		for _, l := range strings.Split(agentLog.String(), "\n") {
			if strings.Contains(l, msg) {
				line = l
			}
		}
		b, _ := os.ReadFile(file)
		if line != "" && strings.Contains(string(b), msg) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the plugin's line did not reach both logs.\nagent log:\n%s\nplugin.log:\n%s", agentLog.String(), b)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(line, "agent.talker") || !strings.Contains(line, "[INFO]") {
		t.Errorf("the agent log shows the line under the plugin's name at its level: %q", line)
	}
}

// A plugin that stops answering (here: stopped with SIGSTOP) fails its
// health checks, is killed and replaced by a new process.
func TestHungPluginReplaced(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	h.SetHealthEvery(100 * time.Millisecond)
	defer h.Close()
	ctx := context.Background()
	if err := h.Start(ctx, host.Config{Name: "hangs", Command: builtin()}); err != nil {
		t.Fatal(err)
	}
	old := h.PluginPID("hangs")
	if err := syscall.Kill(old, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(old, syscall.SIGKILL)
	var st host.Status
	var reason string // what the status said while the plugin was replaced
	for deadline := time.Now().Add(30 * time.Second); ; {
		st = h.Statuses()[0]
		if st.LastError != "" {
			reason = st.LastError
		}
		if st.State == "running" && st.PID != 0 && st.PID != old {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the hung plugin was not replaced: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if st.Restarts != 1 || !strings.Contains(reason, "failed 3 health checks in a row") {
		t.Errorf("replacement of a hung plugin: %d restarts, last error %q", st.Restarts, reason)
	}
	// Once the new process passes a health check, the old error is history.
	waitFor(t, 10*time.Second, "the last error is cleared", func() bool { return h.Statuses()[0].LastError == "" })
	c, _, err := h.Client(ctx, "profile", "grove.noop")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Batch(ctx, sdk.CallCheck, sdk.Spec{Type: "grove.noop", Version: "1.0"}, []sdk.Node{{ID: "n"}}); err != nil {
		t.Errorf("the new plugin process answers: %v", err)
	}
}

func TestCrashLoopMarksUnhealthy(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	defer h.Close()
	ctx := context.Background()
	if err := h.Start(ctx, host.Config{Name: "crashy", Command: []string{testPlugin}, Settings: map[string]any{"crash_after_ms": "50"}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := h.Statuses()[0]
		if st.State == "unhealthy" {
			if !strings.Contains(st.LastError, "crash loop") || st.Restarts < 5 {
				t.Fatalf("unhealthy status: %+v", st)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("plugin never marked unhealthy: %+v", st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, _, err := h.Client(ctx, "profile", "grove.noop")
	if err == nil || !strings.Contains(err.Error(), "unhealthy") || sdk.IsRetryable(err) {
		t.Fatalf("calls to an unhealthy plugin are refused with the reason: %v", err)
	}
	// Every refusal is the one typed error, naming the plugin.
	for what, err := range map[string]error{
		"Client": err,
		"Health": h.Health("profile", "grove.noop"),
		"Call":   h.Call(ctx, "profile", "grove.noop", func(context.Context, *sdk.Client) error { return nil }),
	} {
		ue, ok := errors.AsType[*host.UnavailableError](err)
		if !ok || ue.Plugin != "crashy" || ue.RetryAfter <= 0 || !errors.Is(err, host.ErrUnavailable) {
			t.Errorf("%s on an unhealthy plugin: want an UnavailableError naming crashy with a retry delay, got %#v", what, err)
		}
	}
}

func waitFor(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(within); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting until %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func validateNoop(ctx context.Context, h *host.Host) error {
	return h.Call(ctx, "profile", "grove.noop", func(ctx context.Context, c *sdk.Client) error {
		_, err := c.ValidateProfile(ctx, sdk.Spec{Type: "grove.noop", Version: "1.0"})
		return err
	})
}

// A call made for an API request never waits on a hung plugin longer than
// the call timeout: it is refused as unavailable, naming the plugin, and
// the plugin's status says so. Once the hung process is replaced the same
// call succeeds and the error is cleared.
func TestCallToHungPluginTimesOut(t *testing.T) {
	h := host.New(hclog.NewNullLogger(), t.TempDir())
	// Health checks slow enough that the hung process is still there when
	// the call gives up.
	h.SetHealthEvery(time.Second)
	h.SetCallTimeout(300 * time.Millisecond)
	defer h.Close()
	ctx := context.Background()
	if err := h.Start(ctx, host.Config{Name: "sleepy", Command: []string{testPlugin}}); err != nil {
		t.Fatal(err)
	}
	if err := validateNoop(ctx, h); err != nil {
		t.Fatal(err)
	}
	old := h.PluginPID("sleepy")
	if err := syscall.Kill(old, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer syscall.Kill(old, syscall.SIGKILL)
	proctest.WaitStopped(t, old)
	start := time.Now()
	err := validateNoop(ctx, h)
	took := time.Since(start)
	ue, ok := errors.AsType[*host.UnavailableError](err)
	if !ok || ue.Plugin != "sleepy" || !strings.Contains(err.Error(), "sleepy") || ue.RetryAfter <= 0 {
		t.Fatalf("a call to a hung plugin: want an UnavailableError naming sleepy, got %v", err)
	}
	// A guard against hanging, not a measurement: the call has a 300ms
	// deadline, and without one it would never return.
	if took > 15*time.Second {
		t.Errorf("the call took %s; its timeout is 300ms, so it hung", took)
	}
	if st := h.Statuses()[0]; !strings.Contains(st.LastError, "no answer within 300ms") {
		t.Errorf("the plugin's status tells of the unanswered call: %q", st.LastError)
	}
	waitFor(t, 30*time.Second, "the hung plugin is replaced", func() bool {
		pid := h.PluginPID("sleepy")
		return pid != 0 && pid != old
	})
	if err := validateNoop(ctx, h); err != nil {
		t.Fatalf("the replacement answers: %v", err)
	}
	if st := h.Statuses()[0]; st.LastError != "" {
		t.Errorf("a plugin that answers again has no last error, got %q", st.LastError)
	}
}

// A plugin's name becomes a directory under the data dir: a name that
// climbs out of it is refused, and so is a directory that a symbolic link
// leads out of it.
func TestPluginDirConfinedToDataDir(t *testing.T) {
	base := t.TempDir()
	dataDir := filepath.Join(base, "data")
	h := host.New(hclog.NewNullLogger(), dataDir)
	defer h.Close()
	ctx := context.Background()
	for _, name := range []string{"../../escaped", "../escaped", ".hidden", "a/b", ""} {
		err := h.Start(ctx, host.Config{Name: name, Command: []string{testPlugin}})
		if err == nil || !strings.Contains(err.Error(), "not a valid plugin name") {
			t.Errorf("plugin name %q: want a refusal stating the rule, got %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(base, "escaped")); !os.IsNotExist(err) {
		t.Errorf("a plugin name wrote outside the data dir: %v", err)
	}
	outside := filepath.Join(base, "outside")
	os.MkdirAll(outside, 0o755)
	os.MkdirAll(filepath.Join(dataDir, "plugins"), 0o755)
	if err := os.Symlink(outside, filepath.Join(dataDir, "plugins", "linked")); err != nil {
		t.Fatal(err)
	}
	if err := h.Start(ctx, host.Config{Name: "linked", Command: []string{testPlugin}}); err == nil {
		t.Error("a plugin directory that links out of the data dir must be refused")
	}
	if _, err := os.Stat(filepath.Join(outside, "plugin.log")); !os.IsNotExist(err) {
		t.Errorf("the plugin log was written through a link out of the data dir: %v", err)
	}
	if err := h.Start(ctx, host.Config{Name: "ok-name_1.2", Command: []string{testPlugin}}); err != nil {
		t.Fatalf("a valid name: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "plugins", "ok-name_1.2", "plugin.log")); err != nil {
		t.Errorf("the plugin's log is in its directory: %v", err)
	}
}

// A plugin whose driver panics, in a batch call or in validation, answers
// that call with an error naming the panic, and the process serves on:
// the same process answers the next call, and nothing is restarted.
func TestPanickingPluginServesOn(t *testing.T) {
	ctx := context.Background()
	for _, in := range []string{"create", "validate"} {
		t.Run(in, func(t *testing.T) {
			h := host.New(hclog.NewNullLogger(), t.TempDir())
			defer h.Close()
			if err := h.Start(ctx, host.Config{Name: "panics", Command: []string{testPlugin}, Settings: map[string]any{"panic_in": in}}); err != nil {
				t.Fatal(err)
			}
			pid := h.PluginPID("panics")
			c, _, err := h.Client(ctx, "profile", "grove.noop")
			if err != nil {
				t.Fatal(err)
			}
			spec := sdk.Spec{Type: "grove.noop", Version: "1.0"}
			switch in {
			case "create":
				res, err := c.Batch(ctx, sdk.CallCreate, spec, []sdk.Node{{ID: "n1"}})
				const want = "profile type grove.noop panicked in create: runtime error: index out of range [3] with length 0"
				if err == nil || err.Error() != want || len(res) != 0 {
					t.Errorf("create: %v, %v; want the call's error %q", res, err, want)
				}
			case "validate":
				_, err := c.ValidateProfile(ctx, spec)
				if err == nil || !strings.Contains(err.Error(), "the plugin panicked in validate: validate went wrong") {
					t.Errorf("validate: %v; want an error naming the panic", err)
				}
			}
			if _, err := c.Batch(ctx, sdk.CallCheck, spec, []sdk.Node{{ID: "n1"}}); err != nil {
				t.Errorf("the next call: %v", err)
			}
			if st := h.Statuses()[0]; st.PID != pid || st.Restarts != 0 {
				t.Errorf("after the panic: pid %d (was %d), %d restarts; want the same process", st.PID, pid, st.Restarts)
			}
		})
	}
}
