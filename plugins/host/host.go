// Package host runs plugin binaries out of process, keeps them running, and
// gives the engine typed access to the profile and policy components they
// serve. It never kills a process it did not start.
package host

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grovehq/grove/plugins/sdk"
	pb "github.com/grovehq/grove/plugins/sdk/proto"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Config describes one plugin binary to run.
type Config struct {
	// Name identifies the plugin in logs, errors and `grove plugin list`.
	Name string
	// Command is the binary and its arguments.
	Command []string
	// SHA256, when set, must match the binary's checksum before it runs.
	SHA256 string
	// Override lets the plugin's components replace built-ins of the same type.
	Override bool
	// Settings is passed to the plugin as its configuration.
	Settings map[string]any
	// Env is the environment the plugin declared it needs beyond the
	// minimal one (see PluginEnv), such as DOCKER_HOST for the built-in
	// container driver. Nothing else of the agent's environment reaches it.
	Env map[string]string
}

// Component is one profile or policy type, as the plugin described it.
type Component struct {
	Kind            string // profile or policy
	Type            string
	Versions        []string
	Description     string
	Schema          schema.Schema
	Targets         []sdk.Target
	DefaultPriority int
	Singleton       bool
	// WantsHosts: the policy's checks get a host snapshot.
	WantsHosts bool
	Operations []string
	NeedsPort  bool
	Plugin     string
	// NodeOperations are a profile type's node operations.
	NodeOperations []sdk.NodeOperation
	// APIVersion is the API version of the component's kind agreed with
	// its plugin.
	APIVersion string
}

// WantsCheck reports whether a policy checks the given phase and action.
func (c *Component) WantsCheck(phase, action string) bool {
	if len(c.Targets) == 0 {
		return true
	}
	for _, t := range c.Targets {
		if t.Phase == phase && t.Action == action {
			return true
		}
	}
	return false
}

// Status is a plugin's state as `grove plugin list` shows it.
type Status struct {
	Name       string    `json:"name"`
	Command    []string  `json:"command"`
	State      string    `json:"state"` // running, restarting, failed
	PID        int       `json:"pid"`
	Restarts   int       `json:"restarts"`
	LastError  string    `json:"last_error,omitempty"`
	StartedAt  time.Time `json:"started_at"`
	Components []string  `json:"components"`
	// APIVersions is the API version agreed with the plugin per component
	// kind ("profile", "policy").
	APIVersions map[string]string `json:"api_versions,omitempty"`
}

// Host supervises plugins.
type Host struct {
	logger  hclog.Logger
	dataDir string

	mu         sync.RWMutex
	plugins    map[string]*instance
	components map[string]*Component // key: kind + "/" + type
	refused    []Status
	closed     bool

	healthEvery time.Duration
	callTimeout time.Duration
	metrics     *Metrics
}

// Refuse records a plugin binary that was not loaded, so `grove plugin list`
// shows it with the reason.
func (h *Host) Refuse(name string, command []string, reason string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.refused = append(h.refused, Status{Name: name, Command: command, State: "refused", LastError: reason})
}

// New returns a host; dataDir holds per-plugin runtime directories and logs.
func New(logger hclog.Logger, dataDir string) *Host {
	return &Host{logger: logger, dataDir: dataDir, plugins: map[string]*instance{}, components: map[string]*Component{},
		healthEvery: DefaultHealthEvery, callTimeout: DefaultCallTimeout}
}

type instance struct {
	cfg    Config
	host   *Host
	logger hclog.Logger

	mu        sync.Mutex
	client    *goplugin.Client
	rpc       *sdk.Client
	state     string
	restarts  int
	lastErr   string
	startedAt time.Time
	ready     chan struct{} // closed when a running client is available
	comps     []*Component
	apis      map[string]string // kind -> agreed API version
}

// ErrUnavailable marks calls refused because a plugin is not running or not
// answering. Every such refusal is an *UnavailableError, which matches it
// with errors.Is.
var ErrUnavailable = errors.New("plugin unavailable")

// UnavailableError is a call refused because the plugin serving it is
// restarting, unhealthy or did not answer in time. The API answers it with
// 503 and a Retry-After header.
type UnavailableError struct {
	// Plugin names the plugin.
	Plugin string
	// Reason says why it cannot answer, as a clause ("it is restarting").
	Reason string
	// RetryAfter is when trying again may succeed.
	RetryAfter time.Duration
	// Err is the underlying failure, if any.
	Err error
}

func (e *UnavailableError) Error() string {
	return fmt.Sprintf("plugin %s is unavailable: %s", e.Plugin, e.Reason)
}

// Unwrap returns the underlying failure.
func (e *UnavailableError) Unwrap() error { return e.Err }

// Is makes every UnavailableError match ErrUnavailable.
func (e *UnavailableError) Is(target error) bool { return target == ErrUnavailable }

// DefaultCallTimeout bounds a call made on behalf of an API request (see
// Call) unless SetCallTimeout says otherwise.
const DefaultCallTimeout = 5 * time.Second

// nameRE is the rule for plugin names: each names a directory under the
// data dir, so it must be one path element that cannot climb out of it.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,63}$`)

// CheckName reports whether name may name a plugin: 1 to 64 letters,
// digits, '-', '_' and '.', not starting with '.'.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%q is not a valid plugin name: use 1 to 64 letters, digits, '-', '_' and '.', not starting with '.'", name)
	}
	return nil
}

// Start launches a plugin, verifies its checksum and versions, and registers
// its components. A component type already registered is refused unless the
// plugin's config says it overrides.
func (h *Host) Start(ctx context.Context, cfg Config) error {
	if err := CheckName(cfg.Name); err != nil {
		return err
	}
	if len(cfg.Command) == 0 {
		return fmt.Errorf("plugin %s: command is empty", cfg.Name)
	}
	in := &instance{cfg: cfg, host: h, logger: h.logger.Named(cfg.Name), ready: make(chan struct{})}
	if err := in.launch(ctx); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, c := range in.comps {
		key := c.Kind + "/" + c.Type
		if prev, ok := h.components[key]; ok && !cfg.Override {
			in.kill()
			return fmt.Errorf("plugin %s: %s type %s is already provided by plugin %s; set override = true in the plugin's config to replace it", cfg.Name, c.Kind, c.Type, prev.Plugin)
		}
	}
	for _, c := range in.comps {
		h.components[c.Kind+"/"+c.Type] = c
	}
	h.plugins[cfg.Name] = in
	go in.supervise()
	return nil
}

func (in *instance) launch(ctx context.Context) error {
	cfg := in.cfg
	bin := cfg.Command[0]
	if cfg.SHA256 != "" {
		sum, err := fileSHA256(bin)
		if err != nil {
			return fmt.Errorf("plugin %s: read binary for its checksum: %w", cfg.Name, err)
		}
		if sum != cfg.SHA256 {
			return fmt.Errorf("plugin %s: checksum mismatch for %s: the config registers sha256 %s but the file has %s; refusing to run it", cfg.Name, bin, cfg.SHA256, sum)
		}
	}
	dir, logFile, err := in.host.openPluginDir(cfg.Name)
	if err != nil {
		return fmt.Errorf("plugin %s: %w", cfg.Name, err)
	}
	settings, _ := json.Marshal(cfg.Settings)
	cmd := exec.Command(bin, cfg.Command[1:]...)
	cmd.Env = PluginEnv(os.Getenv, cfg.Env, "GROVE_PLUGIN_DATA_DIR="+dir, "GROVE_PLUGIN_NAME="+cfg.Name, "GROVE_PLUGIN_CONFIG="+string(settings))
	// The plugin dies with the agent; the processes it manages for nodes are
	// its own business (local.process detaches them).
	cmd.SysProcAttr = dieWithParent()
	// go-plugin re-emits the plugin's hclog lines through in.logger, under
	// the plugin's name, and copies raw stderr to the log file.
	pc := sdk.ClientConfig(cmd, in.logger)
	// go-plugin would append the agent's whole environment to cmd.Env; it
	// adds only its handshake variables then.
	pc.SkipHostEnv = true
	if m := in.host.metrics; m != nil {
		pc.GRPCDialOptions = append(pc.GRPCDialOptions, grpc.WithChainUnaryInterceptor(m.interceptor(cfg.Name)))
	}
	pc.Stderr = logFile
	client := goplugin.NewClient(pc)
	fail := func(err error) error {
		client.Kill()
		logFile.Close()
		return fmt.Errorf("plugin %s: %w", cfg.Name, err)
	}
	proto, err := client.Client()
	if err != nil {
		switch msg := strings.ToLower(err.Error()); {
		case strings.Contains(msg, "unrecognized remote plugin message"):
			return fail(fmt.Errorf("start %s: %w. The binary printed to stdout before the go-plugin handshake: either it is not a Grove plugin, "+
				"or it (or a library's init) writes to stdout; plugins must log to stderr, for example with hclog", bin, err))
		case strings.Contains(msg, "incompatible api version with plugin"):
			// go-plugin's "API version" is Grove's handshake version.
			return fail(fmt.Errorf("start %s: %w. The plugin was built for another version of Grove's plugin handshake (this agent speaks %d); "+
				"rebuild it against a matching Grove SDK", bin, err, sdk.HandshakeVersion))
		}
		return fail(fmt.Errorf("start %s: %w", bin, err))
	}
	raw, err := proto.Dispense(sdk.PluginName)
	if err != nil {
		return fail(fmt.Errorf("dispense: %w", err))
	}
	rpc := raw.(*sdk.Client)
	desc, err := rpc.Info.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		return fail(fmt.Errorf("describe: %w", err))
	}
	if desc.HandshakeVersion != sdk.HandshakeVersion {
		return fail(fmt.Errorf("handshake version mismatch: the agent speaks %d, the plugin %d", sdk.HandshakeVersion, desc.HandshakeVersion))
	}
	agreed, err := rpc.Info.Configure(ctx, &pb.ConfigureRequest{ProfileApiVersions: sdk.ProfileAPIVersions(), PolicyApiVersions: sdk.PolicyAPIVersions(),
		DataDir: dir, ConfigJson: settings})
	if err != nil {
		return fail(fmt.Errorf("configure: %w", err))
	}
	apis := map[string]string{}
	for kind, v := range map[string]string{"profile": agreed.ProfileApiVersion, "policy": agreed.PolicyApiVersion} {
		if v != "" {
			apis[kind] = v
		}
	}
	dj, err := sdk.DescriptionToJSON(desc)
	if err != nil {
		return fail(err)
	}
	var comps []*Component
	for _, c := range dj.Components {
		comps = append(comps, &Component{Kind: c.Kind, Type: c.Type, Versions: c.Versions, Description: c.Description, Schema: c.Schema,
			Targets: c.Targets, DefaultPriority: c.DefaultPriority, Singleton: c.Singleton, WantsHosts: c.WantsHosts, Operations: c.Operations, NeedsPort: c.NeedsPort, Plugin: cfg.Name,
			NodeOperations: c.NodeOperations, APIVersion: apis[c.Kind]})
	}
	in.mu.Lock()
	in.client, in.rpc, in.state, in.startedAt, in.comps, in.apis = client, rpc, "running", time.Now(), comps, apis
	close(in.ready)
	in.mu.Unlock()
	in.logger.Info("plugin started", "pid", client.ReattachConfig().Pid, "components", len(comps))
	return nil
}

// MinimalEnv names the variables of the agent's environment every plugin
// gets, when they are set: what a program needs to run (PATH, TMPDIR, the
// time zone and locale), the plugin log level, and GOCOVERDIR, which only a
// coverage-instrumented build reads. Tokens, cloud credentials and anything
// else of the agent's stay with the agent.
func MinimalEnv() []string {
	return []string{"PATH", "TMPDIR", "TZ", "LANG", "LC_ALL", "GROVE_PLUGIN_LOG_LEVEL", "GOCOVERDIR"}
}

// PluginEnv builds a plugin's environment: the MinimalEnv variables that
// getenv knows, then declared (in name order), then extra ("K=V").
func PluginEnv(getenv func(string) string, declared map[string]string, extra ...string) []string {
	var env []string
	for _, k := range MinimalEnv() {
		if v := getenv(k); v != "" {
			env = append(env, k+"="+v)
		}
	}
	keys := make([]string, 0, len(declared))
	for k := range declared {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+declared[k])
	}
	return append(env, extra...)
}

// openPluginDir creates a plugin's directory under the data dir and opens
// its log file. Both are opened through an os.Root, so neither the name nor
// a symbolic link planted in the data dir can place them outside it.
func (h *Host) openPluginDir(name string) (string, *os.File, error) {
	if err := os.MkdirAll(h.dataDir, 0o700); err != nil {
		return "", nil, fmt.Errorf("create data dir: %w", err)
	}
	root, err := os.OpenRoot(h.dataDir)
	if err != nil {
		return "", nil, fmt.Errorf("open data dir: %w", err)
	}
	defer root.Close()
	rel := filepath.Join("plugins", name)
	if !filepath.IsLocal(rel) {
		return "", nil, fmt.Errorf("the plugin's directory %s would be outside the data dir %s", rel, h.dataDir)
	}
	if err := root.MkdirAll(rel, 0o700); err != nil {
		return "", nil, fmt.Errorf("create the plugin's directory in the data dir: %w", err)
	}
	logFile, err := root.OpenFile(filepath.Join(rel, "plugin.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return "", nil, fmt.Errorf("open log file: %w", err)
	}
	return filepath.Join(h.dataDir, rel), logFile, nil
}

// Supervision settings.
const (
	// crashWindow and crashLimit define a crash loop: that many exits within
	// the window mark the plugin unhealthy.
	crashWindow = time.Minute
	crashLimit  = 5
	// stableAfter is how long a restarted plugin must stay up to be trusted
	// again after a crash loop, and to reset the backoff.
	stableAfter = time.Minute
	// pingFailures failed health checks in a row count as a crash.
	pingFailures = 3
)

// DefaultHealthEvery is how often a running plugin's health is checked
// unless SetHealthEvery says otherwise.
const DefaultHealthEvery = 10 * time.Second

// SetHealthEvery sets how often running plugins are health-checked; a check
// that gets no answer within the same time fails. Call it before Start.
func (h *Host) SetHealthEvery(d time.Duration) { h.healthEvery = d }

// SetCallTimeout sets how long Call waits for a plugin's answer. Call it
// before serving requests.
func (h *Host) SetCallTimeout(d time.Duration) {
	if d > 0 {
		h.callTimeout = d
	}
}

// supervise restarts the plugin when its process exits or stops answering
// health checks, with exponential backoff. A crash loop marks the plugin
// unhealthy: calls are refused with the reason until it has stayed up again.
func (in *instance) supervise() {
	backoff := 100 * time.Millisecond
	var exits []time.Time
	for {
		in.watch()
		in.host.mu.RLock()
		closed := in.host.closed
		in.host.mu.RUnlock()
		if closed {
			return
		}
		now := time.Now()
		in.mu.Lock()
		if now.Sub(in.startedAt) > stableAfter {
			backoff = 100 * time.Millisecond
		}
		exits = append(exits, now)
		for len(exits) > 0 && now.Sub(exits[0]) > crashWindow {
			exits = exits[1:]
		}
		in.restarts++
		in.host.metrics.restarted(in.cfg.Name)
		in.rpc = nil
		in.ready = make(chan struct{})
		reason := in.exitReason()
		if len(exits) >= crashLimit {
			in.state = "unhealthy"
			in.lastErr = fmt.Sprintf("crash loop: the plugin exited %d times in the last %s; last: %s", len(exits), crashWindow, reason)
		} else {
			in.state = "restarting"
			in.lastErr = reason
		}
		in.mu.Unlock()
		in.logger.Warn("plugin exited; restarting", "reason", reason, "backoff", backoff)
		time.Sleep(backoff)
		backoff = min(backoff*2, 30*time.Second)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		err := in.launch(ctx)
		cancel()
		if err != nil {
			in.mu.Lock()
			in.lastErr = err.Error()
			in.mu.Unlock()
			in.logger.Error("plugin restart failed", "error", err)
			continue
		}
		if len(exits) >= crashLimit {
			in.mu.Lock()
			in.state = "unhealthy"
			in.mu.Unlock()
		}
	}
}

// watch returns when the running plugin process exits, or after it failed
// several health checks in a row (then it is killed, to be restarted).
func (in *instance) watch() {
	in.mu.Lock()
	rpc, client := in.rpc, in.client
	in.mu.Unlock()
	if rpc == nil || client == nil {
		return
	}
	every := in.host.healthEvery
	t := time.NewTicker(every)
	defer t.Stop()
	failed := 0
	for {
		select {
		case <-rpc.Done():
			return
		case <-t.C:
		}
		// A deadline, so a plugin that hangs (stopped, deadlocked) fails
		// its checks instead of holding this loop forever.
		ctx, cancel := context.WithTimeout(context.Background(), every)
		err := rpc.Ping(ctx)
		cancel()
		if err == nil {
			failed = 0
			in.healthy()
			continue
		}
		failed++
		in.logger.Warn("plugin health check failed", "error", err, "failures", failed)
		if failed >= pingFailures {
			in.mu.Lock()
			in.lastErr = fmt.Sprintf("the plugin failed %d health checks in a row: %v", failed, err)
			in.mu.Unlock()
			// go-plugin's Kill first asks the plugin to shut down and waits
			// for the answer, which a hung plugin never gives: kill the
			// process itself, unless it has exited meanwhile (then its pid
			// may be reaped and is not ours to signal).
			select {
			case <-rpc.Done():
			default:
				if rc := client.ReattachConfig(); rc != nil && rc.Pid > 0 {
					if p, err := os.FindProcess(rc.Pid); err == nil {
						_ = p.Kill()
					}
				}
			}
			client.Kill()
			<-rpc.Done()
			return
		}
	}
}

// healthy records that the running process answered: the last error is
// history then, so it is cleared, except that a plugin marked unhealthy by
// a crash loop keeps its reason until it has stayed up long enough.
func (in *instance) healthy() {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.rpc == nil {
		return
	}
	switch {
	case in.state == "unhealthy" && time.Since(in.startedAt) > stableAfter:
		in.state, in.lastErr = "running", ""
	case in.state == "running":
		in.lastErr = ""
	}
}

// exitReason describes why the plugin process went away.
func (in *instance) exitReason() string {
	if in.lastErr != "" && strings.Contains(in.lastErr, "health checks") {
		return in.lastErr
	}
	return "the plugin process exited unexpectedly; see " + filepath.Join(in.host.dataDir, "plugins", in.cfg.Name, "plugin.log")
}

func (in *instance) kill() {
	in.mu.Lock()
	c := in.client
	in.mu.Unlock()
	if c != nil {
		c.Kill()
	}
}

// current returns the running client, waiting up to wait for a restart. An
// unhealthy plugin is refused at once with the reason, and not as
// retryable: retrying into a crash loop only hides it.
func (in *instance) current(ctx context.Context, wait time.Duration) (*sdk.Client, error) {
	in.mu.Lock()
	rpc, ready, lastErr, state, started := in.rpc, in.ready, in.lastErr, in.state, in.startedAt
	if state == "unhealthy" && rpc != nil && time.Since(started) > stableAfter {
		in.state, in.lastErr, state = "running", "", "running"
	}
	in.mu.Unlock()
	if state == "unhealthy" {
		return nil, in.unhealthyError(lastErr, started)
	}
	if rpc != nil {
		return rpc, nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-ready:
		in.mu.Lock()
		defer in.mu.Unlock()
		if in.state == "unhealthy" {
			return nil, in.unhealthyError(in.lastErr, in.startedAt)
		}
		if in.rpc != nil {
			return in.rpc, nil
		}
	case <-t.C:
	case <-ctx.Done():
		if !errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return nil, ctx.Err()
		}
	}
	return nil, sdk.Retryable(&UnavailableError{Plugin: in.cfg.Name, Reason: fmt.Sprintf("it is restarting (%s)", lastErr),
		RetryAfter: restartRetryAfter, Err: ctx.Err()})
}

// restartRetryAfter is the Retry-After for a plugin that is restarting: its
// supervisor's first backoffs are shorter.
const restartRetryAfter = 2 * time.Second

// unhealthyError refuses a call to a plugin in a crash loop, until it has
// stayed up for stableAfter.
func (in *instance) unhealthyError(lastErr string, started time.Time) error {
	wait := stableAfter
	if !started.IsZero() {
		wait = max(time.Second, stableAfter-time.Since(started))
	}
	return &UnavailableError{Plugin: in.cfg.Name, Reason: fmt.Sprintf("it is unhealthy (%s); calls that need it are refused until it recovers", lastErr),
		RetryAfter: wait}
}

// Close stops every plugin the host started.
func (h *Host) Close() {
	h.mu.Lock()
	h.closed = true
	plugins := h.plugins
	h.mu.Unlock()
	for _, in := range plugins {
		in.kill()
	}
}

// Components lists the registered components of a kind ("" for all), by type.
func (h *Host) Components(kind string) []*Component {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []*Component
	for _, c := range h.components {
		if kind == "" || c.Kind == kind {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Type < out[j].Type })
	return out
}

// Component returns a registered component.
func (h *Host) Component(kind, typ string) (*Component, bool) {
	h.mu.RLock()
	defer h.mu.RUnlock()
	c, ok := h.components[kind+"/"+typ]
	return c, ok
}

// Statuses describes every plugin.
func (h *Host) Statuses() []Status {
	h.mu.RLock()
	defer h.mu.RUnlock()
	var out []Status
	for _, in := range h.plugins {
		in.mu.Lock()
		st := Status{Name: in.cfg.Name, Command: in.cfg.Command, State: in.state, Restarts: in.restarts, LastError: in.lastErr, StartedAt: in.startedAt,
			APIVersions: in.apis}
		if in.client != nil && in.state == "running" {
			if rc := in.client.ReattachConfig(); rc != nil {
				st.PID = rc.Pid
			}
		}
		for _, c := range in.comps {
			st.Components = append(st.Components, c.Kind+":"+c.Type)
		}
		in.mu.Unlock()
		out = append(out, st)
	}
	out = append(out, h.refused...)
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// PluginComponents lists the components a plugin serves.
func (h *Host) PluginComponents(name string) []*Component {
	h.mu.RLock()
	in := h.plugins[name]
	h.mu.RUnlock()
	if in == nil {
		return nil
	}
	in.mu.Lock()
	defer in.mu.Unlock()
	return append([]*Component(nil), in.comps...)
}

// Client returns the client of the plugin serving a component. It waits a
// short while for a plugin that is restarting.
func (h *Host) Client(ctx context.Context, kind, typ string) (*sdk.Client, *Component, error) {
	c, ok := h.Component(kind, typ)
	if !ok {
		return nil, nil, fmt.Errorf("no plugin provides the %s type %q", kind, typ)
	}
	h.mu.RLock()
	in := h.plugins[c.Plugin]
	h.mu.RUnlock()
	rpc, err := in.current(ctx, 5*time.Second)
	return rpc, c, err
}

// Call makes a synchronous call to the plugin serving a component on behalf
// of an API request, which must never hang on a plugin: waiting for a
// restarting plugin and the call itself share one deadline (SetCallTimeout).
// A plugin that is restarting, unhealthy, breaks the connection or does not
// answer in time is reported as an *UnavailableError naming it; other
// failures are returned as fn returned them.
func (h *Host) Call(ctx context.Context, kind, typ string, fn func(ctx context.Context, c *sdk.Client) error) error {
	c, ok := h.Component(kind, typ)
	if !ok {
		return fmt.Errorf("no plugin provides the %s type %q", kind, typ)
	}
	h.mu.RLock()
	in := h.plugins[c.Plugin]
	h.mu.RUnlock()
	timeout := h.callTimeout
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	rpc, err := in.current(cctx, timeout)
	if err != nil {
		return err
	}
	err = fn(cctx, rpc)
	if err == nil {
		in.healthy()
		return nil
	}
	if ctx.Err() != nil {
		return err // the request itself went away
	}
	if cctx.Err() != nil {
		reason := fmt.Sprintf("it did not answer within %s", timeout)
		in.mu.Lock()
		if in.rpc == rpc {
			in.lastErr = fmt.Sprintf("a call on behalf of an API request got no answer within %s", timeout)
		}
		in.mu.Unlock()
		// The health checks replace a hung plugin after pingFailures
		// missed checks.
		return &UnavailableError{Plugin: c.Plugin, Reason: reason, RetryAfter: h.healthEvery, Err: err}
	}
	if status.Code(err) == codes.Unavailable {
		return &UnavailableError{Plugin: c.Plugin, Reason: "the connection to it broke; it is being restarted", RetryAfter: restartRetryAfter, Err: err}
	}
	return err
}

// PluginPID returns the process id of a running plugin (for tests and
// `grove plugin info`).
func (h *Host) PluginPID(name string) int {
	for _, st := range h.Statuses() {
		if st.Name == name {
			return st.PID
		}
	}
	return 0
}

func fileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// IsRetryable reports whether a failed call may succeed if made again: the
// plugin said so, the plugin is restarting, or the connection to a plugin
// process that died broke mid-call.
func IsRetryable(err error) bool {
	if err == nil {
		return false
	}
	if sdk.IsRetryable(err) {
		return true
	}
	return status.Code(err) == codes.Unavailable
}

// Health reports why the plugin serving a component cannot take work now, or
// nil. A restarting plugin is healthy: calls wait for it.
func (h *Host) Health(kind, typ string) error {
	c, ok := h.Component(kind, typ)
	if !ok {
		return fmt.Errorf("no plugin provides the %s type %q", kind, typ)
	}
	h.mu.RLock()
	in := h.plugins[c.Plugin]
	h.mu.RUnlock()
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.state == "unhealthy" && !(in.rpc != nil && time.Since(in.startedAt) > stableAfter) {
		return in.unhealthyError(in.lastErr, in.startedAt)
	}
	return nil
}
