// Package agent wires a Grove agent together: configuration, store, plugin
// host, engine and HTTP API.
package agent

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/hashicorp/hcl/v2/hclsimple"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/plugins/builtin"
	"github.com/grovehq/grove/plugins/host"
)

// DefaultBind is the dev agent's address.
const DefaultBind = "127.0.0.1:7470"

// Config is the agent configuration (an HCL file for `grove agent -config`).
type Config struct {
	Bind      string `hcl:"bind,optional"`
	DataDir   string `hcl:"data_dir,optional"`
	PluginDir string `hcl:"plugin_dir,optional"`
	// AdminToken is a legacy static admin token of project "default",
	// compared in constant time; prefer tokens (grove token create), which
	// are stored hashed, expire and can be revoked.
	AdminToken string `hcl:"admin_token,optional"`
	LogLevel   string `hcl:"log_level,optional"`
	// LogFormat is "text" (the default) or "json": one JSON object per
	// line, for log collectors (`grove agent -log-json` sets it).
	LogFormat string         `hcl:"log_format,optional"`
	Store     *StoreConfig   `hcl:"store,block"`
	Workers   *WorkersConfig `hcl:"workers,block"`
	// API tunes the HTTP API.
	API *APIConfig `hcl:"api,block"`
	// Orchestrator tunes health checks and the reaper.
	Orchestrator *OrchestratorConfig `hcl:"orchestrator,block"`
	Plugins      []PluginConfig      `hcl:"plugin,block"`
	// PluginCallTimeout bounds each call to a plugin made while serving an
	// API request, such as validating a spec ("5s"); a plugin that does not
	// answer in time gets the request a 503.
	PluginCallTimeout string `hcl:"plugin_call_timeout,optional"`
	// Builtin is the command that serves the built-in plugin; tests point it
	// at a freshly built binary. Defaults to this executable.
	Builtin []string `hcl:"builtin_command,optional"`
	// TLS makes the API serve HTTPS. An agent bound to anything but a
	// loopback address needs it: tokens and specs would otherwise cross
	// the network in clear.
	TLS *TLSConfig `hcl:"tls,block"`
	// Dev is dev mode (`grove agent -dev`, the quick start), set by the
	// command line, never by the file: loopback callers sending no token
	// are admins of project "default", which holds every host-access grant,
	// and no bootstrap token is made; so it is refused on any other address.
	Dev bool
	// UI serves the web console at /ui/ (`ui = true`, or `grove agent
	// -ui`). Unset, it is on in dev mode and off otherwise.
	UI *bool `hcl:"ui,optional"`
	// SecretsKeyFile holds the key that encrypts sensitive property values
	// in the store; default <data_dir>/secrets.key, created at first start.
	// Agents sharing a store must share the key.
	SecretsKeyFile string `hcl:"secrets_key_file,optional"`
	// HostName is the host this agent is (default the machine's
	// hostname): the local.process nodes placed on it run here, and only
	// here. Agents sharing a store need distinct names.
	HostName string `hcl:"host_name,optional"`
	// HostLabels are the host's labels, which placement constraints read.
	HostLabels map[string]string `hcl:"host_labels,optional"`
	// HostHeartbeatInterval is how often the agent heartbeats its host
	// ("5s").
	HostHeartbeatInterval string `hcl:"host_heartbeat_interval,optional"`
	// HostDownTimeout is how long a host may go without a heartbeat
	// before an agent marks it down and its local.process nodes are
	// recreated on other hosts ("30s").
	HostDownTimeout string `hcl:"host_down_timeout,optional"`
}

// TLSConfig is the API's certificate and, optionally, the CA that client
// certificates must chain to.
type TLSConfig struct {
	// CertFile is the server certificate chain (PEM), leaf first.
	CertFile string `hcl:"cert_file,optional"`
	// KeyFile is the certificate's private key (PEM).
	KeyFile string `hcl:"key_file,optional"`
	// ClientCAFile, when set, makes the API require a client certificate
	// signed by one of these CAs (PEM) on every connection.
	ClientCAFile string `hcl:"client_ca_file,optional"`
}

// StoreConfig picks the store.
type StoreConfig struct {
	Driver string `hcl:"driver"` // sqlite or postgres
	DSN    string `hcl:"dsn,optional"`
}

// APIConfig tunes the HTTP API.
type APIConfig struct {
	// MaxRequestBytes bounds a request body (default 1 MiB); a larger body
	// is answered 413 without being read.
	MaxRequestBytes int64 `hcl:"max_request_bytes,optional"`
	// ReadTimeout bounds how long a client may take to send a whole
	// request ("60s").
	ReadTimeout string `hcl:"read_timeout,optional"`
	// IdleTimeout is how long an idle keep-alive connection is kept
	// ("120s").
	IdleTimeout string `hcl:"idle_timeout,optional"`
}

// WorkersConfig sizes the engine.
type WorkersConfig struct {
	Cluster            int `hcl:"cluster,optional"`
	Node               int `hcl:"node,optional"`
	NodeBatch          int `hcl:"node_batch,optional"`
	MaxNodesPerCluster int `hcl:"max_nodes_per_cluster,optional"`
	// LeaseSeconds is how long another agent waits before taking over the
	// actions of an agent that stopped renewing them (default 30).
	LeaseSeconds int `hcl:"lease_seconds,optional"`
}

// OrchestratorConfig tunes the loops that keep clusters as declared.
type OrchestratorConfig struct {
	// CheckInterval is how often nodes are checked ("5s"; "0s" turns health
	// checks and restarts off).
	CheckInterval string `hcl:"check_interval,optional"`
	// Retention is how many finished actions and events are kept per
	// cluster and per node (default 50; -1 keeps all).
	Retention int `hcl:"retention,optional"`
	// ReapInterval is how often old actions and events are deleted ("1m").
	ReapInterval string `hcl:"reap_interval,optional"`
	// DriverEvents follows the node events drivers stream (default true).
	DriverEvents *bool `hcl:"driver_events,optional"`
}

// PluginConfig registers a third-party plugin binary, or, labelled
// "builtin", configures the built-in plugin (config only).
type PluginConfig struct {
	Name     string            `hcl:"name,label"`
	Command  string            `hcl:"command,optional"`
	Args     []string          `hcl:"args,optional"`
	SHA256   string            `hcl:"sha256,optional"`
	Override bool              `hcl:"override,optional"`
	Settings map[string]string `hcl:"config,optional"`
	// PassEnv names variables of the agent's environment the plugin gets;
	// it gets no others beyond the plugin host's minimal set.
	PassEnv []string `hcl:"pass_env,optional"`
}

// LoadConfig reads an HCL agent config file. Defaults are applied by
// Validate, after command-line flags have overridden what they set.
func LoadConfig(path string) (*Config, error) {
	var c Config
	if err := hclsimple.DecodeFile(path, nil, &c); err != nil {
		return nil, fmt.Errorf("read agent config: %w", err)
	}
	return &c, nil
}

// Validate applies defaults and checks values.
func (c *Config) Validate() error {
	if c.Bind == "" {
		c.Bind = DefaultBind
	}
	if c.DataDir == "" {
		c.DataDir = defaultDataDir()
	}
	abs, err := filepath.Abs(c.DataDir)
	if err != nil {
		return err
	}
	c.DataDir = abs
	if c.PluginDir == "" {
		c.PluginDir = filepath.Join(c.DataDir, "plugins.d")
	}
	if c.Store == nil {
		c.Store = &StoreConfig{Driver: "sqlite"}
	}
	switch c.Store.Driver {
	case "sqlite":
		if c.Store.DSN == "" {
			c.Store.DSN = filepath.Join(c.DataDir, "grove.db")
		}
	case "postgres":
		if c.Store.DSN == "" {
			return fmt.Errorf("store.dsn is required for the postgres driver")
		}
	default:
		return fmt.Errorf("store.driver must be sqlite or postgres, got %q", c.Store.Driver)
	}
	if c.LogLevel != "" && !ValidLogLevel(c.LogLevel) {
		return fmt.Errorf("log_level must be trace, debug, info, warn or error, got %q", c.LogLevel)
	}
	switch c.LogFormat {
	case "", "text", "json":
	default:
		return fmt.Errorf("log_format must be \"text\" or \"json\", got %q", c.LogFormat)
	}
	if c.Workers == nil {
		c.Workers = &WorkersConfig{}
	}
	if c.API == nil {
		c.API = &APIConfig{}
	}
	if c.API.MaxRequestBytes < 0 {
		return fmt.Errorf("api.max_request_bytes must be a positive number of bytes, got %d", c.API.MaxRequestBytes)
	}
	if c.Orchestrator == nil {
		c.Orchestrator = &OrchestratorConfig{}
	}
	if err := c.checkSizes(); err != nil {
		return err
	}
	for field, v := range map[string]*string{"api.read_timeout": &c.API.ReadTimeout, "api.idle_timeout": &c.API.IdleTimeout} {
		if *v == "" {
			*v = map[string]string{"api.read_timeout": "60s", "api.idle_timeout": "120s"}[field]
		}
		if d, err := time.ParseDuration(*v); err != nil || d <= 0 {
			return fmt.Errorf("%s must be a positive duration such as \"60s\", got %q", field, *v)
		}
	}
	if c.PluginCallTimeout != "" {
		if d, err := time.ParseDuration(c.PluginCallTimeout); err != nil || d <= 0 {
			return fmt.Errorf("plugin_call_timeout must be a positive duration such as \"5s\", got %q", c.PluginCallTimeout)
		}
	}
	if err := c.checkHost(); err != nil {
		return err
	}
	if c.TLS != nil {
		if _, err := c.TLS.ServerConfig(); err != nil {
			return err
		}
	}
	if err := c.checkBind(); err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, p := range c.Plugins {
		// The label names the plugin's directory in the data dir.
		if err := host.CheckName(p.Name); err != nil {
			return fmt.Errorf("plugin %q block: the label %w", p.Name, err)
		}
		if seen[p.Name] {
			return fmt.Errorf("plugin %q block: the label is used twice; each plugin needs its own", p.Name)
		}
		seen[p.Name] = true
		if p.Name == builtin.Name {
			if err := checkBuiltin(p); err != nil {
				return err
			}
			continue
		}
		if p.Command == "" {
			return fmt.Errorf("plugin %q block: command is required: the plugin's binary, in the plugin dir", p.Name)
		}
		if len(p.SHA256) != 64 {
			return fmt.Errorf("plugin %q: sha256 must be the 64-character hex checksum of the binary", p.Name)
		}
	}
	return nil
}

// ValidLogLevel reports whether level names one of hclog's levels, the
// ones log_level and -log-level take.
func ValidLogLevel(level string) bool {
	switch strings.ToLower(strings.TrimSpace(level)) {
	case "trace", "debug", "info", "warn", "error":
		return true
	}
	return false
}

// The bounds of the agent's sizes and intervals. Leaving a size out, or
// giving 0, takes the engine's default. The upper bounds are far above
// what any machine needs, and keep a typo from starving this one: an agent
// given 100,000,000 cluster workers spent minutes starting them and did
// not answer a signal meanwhile. The least intervals keep a loop that
// writes the store from turning into a busy one ("1ns" was accepted).
const (
	maxWorkers         = 1024
	maxNodeBatch       = 10000
	maxNodesPerCluster = 1000000
	maxLeaseSeconds    = 86400
	minCheckInterval   = 100 * time.Millisecond
	minReapInterval    = 100 * time.Millisecond
	minHeartbeat       = 100 * time.Millisecond
)

// checkSizes holds the workers and orchestrator blocks to their bounds;
// each error names the field, the rule and the value.
func (c *Config) checkSizes() error {
	w := c.Workers
	for _, f := range []struct {
		field string
		v, hi int
	}{
		{"workers.cluster", w.Cluster, maxWorkers},
		{"workers.node", w.Node, maxWorkers},
		{"workers.node_batch", w.NodeBatch, maxNodeBatch},
		{"workers.max_nodes_per_cluster", w.MaxNodesPerCluster, maxNodesPerCluster},
		{"workers.lease_seconds", w.LeaseSeconds, maxLeaseSeconds},
	} {
		if f.v < 0 || f.v > f.hi {
			return fmt.Errorf("%s must be from 1 to %d (0, or leaving it out, takes the default), got %d", f.field, f.hi, f.v)
		}
	}
	o := c.Orchestrator
	if o.Retention < -1 {
		return fmt.Errorf("orchestrator.retention must be -1 (keep everything) or 0 or more, got %d", o.Retention)
	}
	if v := o.CheckInterval; v != "" {
		if d, err := time.ParseDuration(v); err != nil || d < 0 || (d > 0 && d < minCheckInterval) {
			return fmt.Errorf("orchestrator.check_interval must be a duration of at least %s such as \"5s\", or \"0s\" to turn health checks off, got %q", minCheckInterval, v)
		}
	}
	if v := o.ReapInterval; v != "" {
		if d, err := time.ParseDuration(v); err != nil || d < minReapInterval {
			return fmt.Errorf("orchestrator.reap_interval must be a duration of at least %s such as \"1m\", got %q", minReapInterval, v)
		}
	}
	return nil
}

// checkBuiltin checks the plugin "builtin" block: it configures the
// built-in plugin, which is part of grove, so it takes config alone, with
// the keys the built-in types read.
func checkBuiltin(p PluginConfig) error {
	if p.Command != "" || p.SHA256 != "" || len(p.Args) > 0 || p.Override || len(p.PassEnv) > 0 {
		return fmt.Errorf("plugin %q block: the built-in plugin is part of grove and takes only config; "+
			"command, args, sha256, override and pass_env are for third-party plugins", p.Name)
	}
	known := builtin.ConfigKeys()
	for k := range p.Settings {
		if !slices.Contains(known, k) {
			return fmt.Errorf("plugin %q block: config key %q is not one the built-in plugin reads; it reads %s", p.Name, k, strings.Join(known, ", "))
		}
	}
	return nil
}

// BuiltinSettings is the config of the plugin "builtin" block, if any.
func (c *Config) BuiltinSettings() map[string]any {
	out := map[string]any{}
	for _, p := range c.Plugins {
		if p.Name == builtin.Name {
			for k, v := range p.Settings {
				out[k] = v
			}
		}
	}
	return out
}

func defaultDataDir() string {
	if d := os.Getenv("GROVE_DATA_DIR"); d != "" {
		return d
	}
	if home, err := os.UserHomeDir(); err == nil {
		return filepath.Join(home, ".grove")
	}
	return ".grove"
}

// ServerConfig loads the certificate, key and client CAs into the API's TLS
// configuration. Errors name the field at fault.
func (t *TLSConfig) ServerConfig() (*tls.Config, error) {
	if t.CertFile == "" || t.KeyFile == "" {
		return nil, fmt.Errorf("the tls block needs both cert_file and key_file (PEM files: the server certificate and its private key)")
	}
	cert, err := tls.LoadX509KeyPair(t.CertFile, t.KeyFile)
	if err != nil {
		return nil, fmt.Errorf("tls.cert_file %s and tls.key_file %s: %w", t.CertFile, t.KeyFile, err)
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if t.ClientCAFile != "" {
		pem, err := os.ReadFile(t.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("tls.client_ca_file: %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("tls.client_ca_file %s holds no PEM certificate", t.ClientCAFile)
		}
		cfg.ClientCAs = pool
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	}
	return cfg, nil
}

// checkBind refuses what would expose the agent: dev mode, which trusts
// loopback callers without a token, anywhere but loopback; and plain HTTP
// on an address other hosts can reach.
func (c *Config) checkBind() error {
	host, _, err := net.SplitHostPort(c.Bind)
	if err != nil {
		return fmt.Errorf("bind must be ADDRESS:PORT such as %q, got %q: %w", DefaultBind, c.Bind, err)
	}
	if isLoopback(host) {
		return nil
	}
	if c.Dev {
		return fmt.Errorf("bind %q is not a loopback address, and -dev trusts callers without a token, so it runs only on loopback: "+
			"bind 127.0.0.1 (the -dev default), or run without -dev, with -config FILE holding a tls block (see docs/security.md)", c.Bind)
	}
	if c.TLS == nil {
		return fmt.Errorf("bind %q is not a loopback address, and an agent other hosts can reach must serve HTTPS: "+
			"add a block tls { cert_file = \"server.pem\" key_file = \"server-key.pem\" } to the agent config, or bind 127.0.0.1 (see docs/security.md)", c.Bind)
	}
	return nil
}

// isLoopback reports whether host (an IP or a name, "" for every address)
// is reachable only from this machine. Names other than localhost are not
// resolved: what they resolve to may change after the check.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkHost applies the host defaults and checks the host keys.
func (c *Config) checkHost() error {
	if c.HostName == "" {
		name, err := os.Hostname()
		if err != nil || name == "" {
			return fmt.Errorf("host_name is not set and the machine's hostname cannot be read (%v); set host_name in the agent config", err)
		}
		c.HostName = name
	}
	if err := model.ValidHostName("host_name", c.HostName); err != nil {
		return err
	}
	if err := model.ValidHostLabels("host_labels", c.HostLabels); err != nil {
		return err
	}
	defaults := map[string]string{"host_heartbeat_interval": "5s", "host_down_timeout": "30s"}
	for field, v := range map[string]*string{"host_heartbeat_interval": &c.HostHeartbeatInterval, "host_down_timeout": &c.HostDownTimeout} {
		if *v == "" {
			*v = defaults[field]
		}
		if d, err := time.ParseDuration(*v); err != nil || d <= 0 {
			return fmt.Errorf("%s must be a positive duration such as %q, got %q", field, defaults[field], *v)
		}
	}
	beat, _ := time.ParseDuration(c.HostHeartbeatInterval)
	timeout, _ := time.ParseDuration(c.HostDownTimeout)
	if beat < minHeartbeat {
		return fmt.Errorf("host_heartbeat_interval must be at least %s: each heartbeat writes the store, got %q", minHeartbeat, c.HostHeartbeatInterval)
	}
	if timeout < 2*beat {
		return fmt.Errorf("host_down_timeout (%s) must be at least twice host_heartbeat_interval (%s): one late heartbeat must not mark a live host down", timeout, beat)
	}
	return nil
}

// UIEnabled reports whether the agent serves the web console: as the
// config (or -ui) says, else only in dev mode.
func (c *Config) UIEnabled() bool {
	if c.UI != nil {
		return *c.UI
	}
	return c.Dev
}
