package agent

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/server"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/postgres"
	"github.com/grovehq/grove/core/store/sqlite"
	"github.com/grovehq/grove/plugins/builtin"
	"github.com/grovehq/grove/plugins/host"
)

// Agent is a running Grove agent.
type Agent struct {
	Config *Config
	Store  store.Store
	Host   *host.Host
	Engine *engine.Engine
	Addr   string
	// Metrics is the agent's metrics registry, served at GET /metrics.
	Metrics *prometheus.Registry

	http *http.Server
	lock *os.File
	log  hclog.Logger
}

// Start brings an agent up: it locks the data dir, opens the store, starts
// the plugins, the engine (which reclaims unfinished work) and the API.
func Start(ctx context.Context, cfg *Config, version string, log hclog.Logger) (*Agent, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	// The data dir holds the store, with every object's spec and metadata,
	// and the plugins' logs: it is the agent user's alone.
	if err := os.MkdirAll(cfg.DataDir, 0o700); err != nil {
		return nil, fmt.Errorf("create data dir: %w", err)
	}
	a := &Agent{Config: cfg, log: log}
	ok := false
	defer func() {
		if !ok {
			a.Close()
		}
	}()
	lock, err := os.OpenFile(filepath.Join(cfg.DataDir, "agent.lock"), os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, fmt.Errorf("lock data dir: %w", err)
	}
	a.lock = lock
	if err := lockFile(lock); err != nil {
		return nil, fmt.Errorf("another Grove agent is using the data dir %s; stop it or pass a different -data-dir", cfg.DataDir)
	}
	engineID, err := loadEngineID(cfg.DataDir)
	if err != nil {
		return nil, err
	}
	// Open into a concrete variable: a nil *store.SQL assigned to a.Store
	// would be a non-nil interface, and Close would call through it.
	var st *store.SQL
	switch cfg.Store.Driver {
	case "postgres":
		st, err = postgres.Open(ctx, cfg.Store.DSN)
	default:
		st, err = sqlite.Open(ctx, cfg.Store.DSN)
	}
	if err != nil {
		return nil, err
	}
	a.Store = st
	log.Info("store opened", "driver", cfg.Store.Driver, "location", st.Location(), "schema_version", st.SchemaVersion())
	a.Metrics = newRegistry(st)
	observed := observeStore(st, a.Metrics)
	a.Host = host.New(log.Named("plugin"), cfg.DataDir)
	a.Host.SetMetrics(host.NewMetrics(a.Metrics))
	a.Host.SetCallTimeout(parseDuration(cfg.PluginCallTimeout))
	cmd := cfg.Builtin
	if len(cmd) == 0 {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("find the grove executable to serve built-in plugins: %w", err)
		}
		cmd = []string{exe, "plugin", "serve"}
	}
	if err := a.Host.Start(ctx, host.Config{Name: builtin.Name, Command: cmd, Env: builtin.Env(), Settings: cfg.BuiltinSettings()}); err != nil {
		return nil, err
	}
	registered := map[string]bool{}
	for _, p := range cfg.Plugins {
		if p.Name == builtin.Name {
			continue // its config went to the built-in plugin above
		}
		path, err := pluginCommand(cfg.PluginDir, p.Command)
		registered[path] = true
		command := append([]string{path}, p.Args...)
		if err != nil {
			log.Error("plugin refused", "plugin", p.Name, "reason", err)
			a.Host.Refuse(p.Name, command, err.Error())
			continue
		}
		settings := map[string]any{}
		for k, v := range p.Settings {
			settings[k] = v
		}
		// A plugin that cannot start is refused and reported, not fatal:
		// one bad binary must not keep the agent and the other plugins down.
		env := map[string]string{}
		for _, k := range p.PassEnv {
			if v, ok := os.LookupEnv(k); ok {
				env[k] = v
			}
		}
		if err := a.Host.Start(ctx, host.Config{Name: p.Name, Command: command, SHA256: p.SHA256, Override: p.Override, Settings: settings, Env: env}); err != nil {
			log.Error("plugin refused", "plugin", p.Name, "error", err)
			a.Host.Refuse(p.Name, command, err.Error())
		}
	}
	if entries, err := os.ReadDir(cfg.PluginDir); err == nil {
		for _, e := range entries {
			path := filepath.Join(cfg.PluginDir, e.Name())
			info, err := e.Info()
			if err != nil || !info.Mode().IsRegular() || info.Mode()&0o111 == 0 || registered[path] {
				continue
			}
			reason := "the binary is in the plugin dir but not registered in the agent config; add a plugin block with its sha256 to load it"
			log.Warn("plugin not loaded", "path", path, "reason", reason)
			a.Host.Refuse(e.Name(), []string{path}, reason)
		}
	}
	keyFile, create := cfg.SecretsKeyFile, false
	if keyFile == "" {
		keyFile, create = filepath.Join(cfg.DataDir, "secrets.key"), true
	}
	secretsKey, err := engine.LoadSecretsKey(keyFile, create)
	if err != nil {
		return nil, err
	}
	a.Engine = engine.New(observed, a.Host, log.Named("engine"), engine.Config{EngineID: engineID, ClusterWorkers: cfg.Workers.Cluster,
		NodeWorkers: cfg.Workers.Node, NodeBatch: cfg.Workers.NodeBatch, MaxNodesPerCluster: cfg.Workers.MaxNodesPerCluster,
		Lease: time.Duration(cfg.Workers.LeaseSeconds) * time.Second, CheckInterval: checkInterval(cfg.Orchestrator.CheckInterval),
		Retention: cfg.Orchestrator.Retention, ReapInterval: parseDuration(cfg.Orchestrator.ReapInterval),
		IgnoreDriverEvents: cfg.Orchestrator.DriverEvents != nil && !*cfg.Orchestrator.DriverEvents, SecretsKey: secretsKey, Dev: cfg.Dev,
		Metrics: engine.NewMetrics(a.Metrics), HostName: cfg.HostName, HostLabels: cfg.HostLabels,
		HeartbeatInterval: parseDuration(cfg.HostHeartbeatInterval), HostDownTimeout: parseDuration(cfg.HostDownTimeout)})
	if err := a.Engine.Start(ctx); err != nil {
		return nil, err
	}
	if !cfg.Dev {
		if err := a.bootstrap(ctx); err != nil {
			return nil, err
		}
	}
	ln, err := net.Listen("tcp", cfg.Bind)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Bind, err)
	}
	a.Addr = "http://" + ln.Addr().String()
	if cfg.TLS != nil {
		tc, err := cfg.TLS.ServerConfig()
		if err != nil {
			ln.Close()
			return nil, err
		}
		ln = tls.NewListener(ln, tc)
		a.Addr = "https://" + strings.TrimPrefix(a.Addr, "http://")
	}
	// The timeouts keep a slow or idle client from holding a connection
	// (and its goroutine) forever. ReadTimeout also ends the context of a
	// request still running after it; no handler runs that long (work is
	// queued as actions).
	// The monitor streams the agent's log lines when its logger lets sinks
	// in (grove agent makes one that does).
	logs, _ := log.(hclog.InterceptLogger)
	a.http = &http.Server{Handler: server.New(a.Engine, server.Options{AdminToken: cfg.AdminToken, Dev: cfg.Dev, UI: cfg.UIEnabled(), Version: version, Logger: log.Named("api"), Host: a.Host,
		MaxRequestBytes: cfg.API.MaxRequestBytes, Metrics: server.NewMetrics(a.Metrics), Gatherer: a.Metrics, Logs: logs}),
		ReadHeaderTimeout: min(10*time.Second, parseDuration(cfg.API.ReadTimeout)), ReadTimeout: parseDuration(cfg.API.ReadTimeout),
		IdleTimeout: parseDuration(cfg.API.IdleTimeout),
		// Failed TLS handshakes (a client without the CA, plain HTTP on the
		// HTTPS port) are logged by the server itself: into the agent's log.
		ErrorLog: log.Named("api").StandardLogger(&hclog.StandardLoggerOptions{InferLevels: true})}
	go func() {
		if err := a.http.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("API server stopped", "error", err)
		}
	}()
	ok = true
	return a, nil
}

// Close stops the API, the engine and the plugins. Node processes keep
// running; the next start finds them again.
func (a *Agent) Close() {
	if a.http != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_ = a.http.Shutdown(ctx)
		cancel()
	}
	if a.Engine != nil {
		a.Engine.Stop()
	}
	if a.Host != nil {
		a.Host.Close()
	}
	if a.Store != nil {
		a.Store.Close()
	}
	if a.lock != nil {
		a.lock.Close()
	}
}

// BootstrapTokenFile is the file in the data dir that receives the
// bootstrap token's secret.
const BootstrapTokenFile = "bootstrap-token"

// bootstrap makes the first admin token when the store has none, as `nomad
// acl bootstrap` does, and writes its secret to a file only the agent's
// user can read. The log names the file, never the secret.
func (a *Agent) bootstrap(ctx context.Context) error {
	t, secret, err := a.Engine.Bootstrap(ctx)
	if err != nil {
		return fmt.Errorf("create the bootstrap token: %w", err)
	}
	if t == nil {
		return nil
	}
	path := filepath.Join(a.Config.DataDir, BootstrapTokenFile)
	if err := writePrivate(path, []byte(secret+"\n")); err != nil {
		// Without the file nobody could use the token: take it back, so the
		// next start makes another.
		_ = a.Engine.RevokeToken(ctx, t.ID)
		return fmt.Errorf("write the bootstrap token: %w", err)
	}
	a.log.Info("bootstrap token created: an admin of project default; its secret is in the file (read it, then delete the file)",
		"id", t.ID, "file", path)
	return nil
}

// writePrivate writes a new file readable by its owner alone, replacing
// one left by an earlier bootstrap whatever its mode.
func writePrivate(path string, b []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// loadEngineID keeps the engine id stable across restarts of one agent, so
// its unfinished actions are reclaimed at once instead of after their lease.
func loadEngineID(dir string) (string, error) {
	path := filepath.Join(dir, "engine-id")
	b, err := os.ReadFile(path)
	if err == nil && len(strings.TrimSpace(string(b))) > 0 {
		return strings.TrimSpace(string(b)), nil
	}
	id := uuid.NewString()
	if err := os.WriteFile(path, []byte(id+"\n"), 0o600); err != nil {
		return "", fmt.Errorf("write engine id: %w", err)
	}
	return id, nil
}

func parseDuration(s string) time.Duration {
	d, _ := time.ParseDuration(s)
	return d
}

// checkInterval maps the config to the engine: unset is the default, an
// explicit zero turns the checks off.
func checkInterval(s string) time.Duration {
	if s == "" {
		return 0
	}
	if d := parseDuration(s); d > 0 {
		return d
	}
	return -1
}
