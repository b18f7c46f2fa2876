package cli

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/agent"
	examples "github.com/grovehq/grove/examples/hcl"
	"github.com/grovehq/grove/hcl"
	"github.com/grovehq/grove/plugins/builtin"
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/sdk"
)

func runAgent(ctx context.Context, env *Env, args []string) error {
	g := newGlobals(env)
	fs := flagSet("agent", g)
	dev := fs.Bool("dev", false, "development mode: embedded SQLite store, bound to "+agent.DefaultBind+"; callers on loopback need no token, so it is refused on any other address")
	bind := fs.String("bind", "", "ADDR:PORT to listen on (default "+agent.DefaultBind+")")
	dataDir := fs.String("data-dir", "", "data directory (default $GROVE_DATA_DIR or ~/.grove)")
	configFile := fs.String("config", "", "HCL agent config file")
	logLevel := fs.String("log-level", "info", "trace, debug, info, warn or error")
	uiFlag := fs.Bool("ui", false, "serve the web console at /ui/ (on by default with -dev; -ui=false turns it off; ui = true in the config)")
	logJSON := fs.Bool("log-json", false, "log one JSON object per line (log_format = \"json\" in the config)")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if !*dev && *configFile == "" {
		return usagef("grove agent needs -dev or -config FILE")
	}
	cfg := &agent.Config{}
	if *configFile != "" {
		c, err := agent.LoadConfig(*configFile)
		if err != nil {
			return err
		}
		cfg = c
	}
	if *bind != "" {
		cfg.Bind = *bind
	}
	if *dataDir != "" {
		cfg.DataDir = *dataDir
	}
	cfg.Dev = *dev
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "ui" {
			cfg.UI = uiFlag
		}
	})
	if !agent.ValidLogLevel(*logLevel) {
		return usagef("-log-level must be trace, debug, info, warn or error, got %q", *logLevel)
	}
	if cfg.LogLevel != "" && *logLevel == "info" {
		*logLevel = cfg.LogLevel
	}
	if *logJSON {
		cfg.LogFormat = "json"
	}
	// An intercept logger lets `grove monitor` (GET /v1/agent/monitor)
	// receive the agent's lines as they are written.
	log := hclog.NewInterceptLogger(&hclog.LoggerOptions{Name: "grove", Level: hclog.LevelFromString(*logLevel), Output: env.Stderr,
		JSONFormat: cfg.LogFormat == "json"})
	a, err := agent.Start(ctx, cfg, version(), log)
	if err != nil {
		return err
	}
	defer a.Close()
	fmt.Fprintf(env.Stdout, "Grove agent %s listening on %s (data dir %s, %s store).\n", version(), a.Addr, cfg.DataDir, cfg.Store.Driver)
	<-ctx.Done()
	fmt.Fprintln(env.Stdout, "Grove agent stopping; nodes keep running and are found again at the next start.")
	return nil
}

// pluginServe serves the built-in plugin over go-plugin (the agent starts
// it). `grove plugin serve describe` describes, like any plugin binary
// given `describe` after its serving command.
func pluginServe(_ context.Context, env *Env, args []string) error {
	if len(args) > 0 && args[0] == "describe" {
		return sdk.WriteDescription(env.Stdout, builtin.Plugin(version()))
	}
	sdk.Serve(builtin.Plugin(version()))
	return nil
}

func pluginDescribe(_ context.Context, env *Env, _ []string) error {
	return sdk.WriteDescription(env.Stdout, builtin.Plugin(version()))
}

func pluginInfo(ctx context.Context, env *Env, args []string) error {
	g := newGlobals(env)
	fs := flagSet("plugin info", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove plugin info <name>")
	}
	var one struct {
		Plugin api.PluginStatus `json:"plugin"`
	}
	if _, err := g.client().Do(ctx, http.MethodGet, "/v1/plugins/"+url.PathEscape(pos[0]), nil, nil, &one); err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, one.Plugin)
	}
	return details(env, one.Plugin)
}

func pluginList(ctx context.Context, env *Env, args []string) error {
	g := newGlobals(env)
	fs := flagSet("plugin list", g)
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	var out struct {
		Plugins []api.PluginStatus `json:"plugins"`
	}
	if _, err := g.client().Do(ctx, http.MethodGet, "/v1/plugins", nil, nil, &out); err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, out.Plugins)
	}
	fmt.Fprintf(env.Stdout, "%-12s %-10s %-8s %-8s %s\n", "NAME", "STATE", "PID", "RESTARTS", "COMPONENTS / LAST ERROR")
	for _, p := range out.Plugins {
		info := strings.Join(p.Components, ", ")
		if p.LastError != "" {
			info += " " + p.LastError
		}
		fmt.Fprintf(env.Stdout, "%-12s %-10s %-8d %-8d %s\n", p.Name, p.State, p.PID, p.Restarts, strings.TrimSpace(info))
	}
	return nil
}

// runDemoHTTP is the small HTTP server the quick start's nodes run, so the
// quick start needs nothing but Go.
func runDemoHTTP(ctx context.Context, env *Env, _ []string) error {
	port := os.Getenv("GROVE_NODE_PORT")
	if port == "" {
		return usagef("demo-http serves on $GROVE_NODE_PORT, which is not set")
	}
	name := os.Getenv("GROVE_NODE_NAME")
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "hello from %s (node %s of cluster %s)\n", name, os.Getenv("GROVE_NODE_INDEX"), os.Getenv("GROVE_CLUSTER_NAME"))
	})
	srv := &http.Server{Addr: "127.0.0.1:" + port, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		srv.Close()
	}()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		return err
	}
	return nil
}

// invokedAs is how the user runs this grove again from the same shell, for
// the hints a command prints: "go run ." when `go run` built it (the binary
// is a temporary file that is gone at exit), "grove" when that name on PATH
// is this binary, and otherwise the path it was started by (bin/grove after
// `make build`). A bare "grove" in a hint fails for whoever has not
// installed it.
func invokedAs(arg0 string) string {
	exe, err := os.Executable()
	if err != nil {
		return arg0
	}
	if strings.Contains(filepath.ToSlash(exe), "/go-build") {
		return "go run ."
	}
	if p, err := exec.LookPath("grove"); err == nil {
		if a, err := os.Stat(p); err == nil {
			if b, err := os.Stat(exe); err == nil && os.SameFile(a, b) {
				return "grove"
			}
		}
	}
	return arg0
}

// runQuickstart runs Grove's main job on the embedded default: an agent with
// SQLite and the built-in plugins, and the examples/hcl/quickstart definition
// applied to it (a local.process cluster whose nodes answer HTTP).
func runQuickstart(ctx context.Context, env *Env, args []string) error {
	g := newGlobals(env)
	fs := flagSet("quickstart", g)
	// The default is named, not shown: the temporary directory differs by
	// machine, and docs/cli.md is generated from this help.
	dataDir := fs.String("data-dir", "", "data directory (default: grove-quickstart in the system's temporary directory)")
	bind := fs.String("bind", "127.0.0.1:0", "agent address")
	size := fs.Int("nodes", 3, "number of nodes")
	keep := fs.Bool("keep", false, "leave the cluster running at exit")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	if *dataDir == "" {
		*dataDir = filepath.Join(os.TempDir(), "grove-quickstart")
	}
	log := hclog.New(&hclog.LoggerOptions{Name: "grove", Level: hclog.Warn, Output: env.Stderr})
	// Dev mode: the quick start's agent is on loopback and needs no token.
	a, err := agent.Start(ctx, &agent.Config{Bind: *bind, DataDir: *dataDir, Dev: true}, version(), log)
	if err != nil {
		return err
	}
	defer a.Close()
	c := api.New(api.Options{Address: a.Addr, Token: g.token, TLS: g.tls})
	fmt.Fprintf(env.Stdout, "Grove agent running at %s (data in %s).\n", a.Addr, *dataDir)

	srcs := map[string][]byte{}
	entries, _ := examples.Quickstart.ReadDir("quickstart")
	for _, e := range entries {
		b, err := examples.Quickstart.ReadFile("quickstart/" + e.Name())
		if err != nil {
			return err
		}
		srcs["examples/hcl/quickstart/"+e.Name()] = b
	}
	def, diags := hcl.LoadSources(srcs, hcl.Options{Vars: []string{fmt.Sprintf("nodes=%d", *size)}})
	if !diags.HasErrors() {
		diags = hcl.Validate(def, &hcl.AgentSchemas{Client: c})
	}
	if diags.HasErrors() {
		printDiagnostics(env, diags, def.Files)
		return fmt.Errorf("the quickstart definition is not valid")
	}
	plan, err := hcl.MakePlan(ctx, c, def, false)
	if err != nil {
		return err
	}
	fmt.Fprintln(env.Stdout, "Applying examples/hcl/quickstart:")
	applier := &hcl.Applier{Client: c, Progress: env.Stdout, Terminal: env.Terminal}
	if err := applier.Apply(ctx, plan, false); err != nil {
		return err
	}
	cl, err := c.GetCluster(ctx, "quickstart")
	if err != nil {
		return err
	}
	nodes, err := c.ListNodes(ctx, map[string][]string{"cluster_id": {cl.ID}, "sort": {"index"}})
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "\nCluster %s is %s with %s:\n", cl.Name, cl.Status, plural(len(nodes), "node", "nodes"))
	for _, n := range nodes {
		addr, _ := n.Data["address"].(string)
		body := fetch(ctx, "http://"+addr+"/")
		fmt.Fprintf(env.Stdout, "  %-8s %-8s http://%-22s %s\n", n.Name, n.Status, addr, body)
	}
	if len(nodes) > 0 {
		self := invokedAs(os.Args[0])
		fmt.Fprintf(env.Stdout, "\nTry, in another terminal:\n  curl http://%s/\n  GROVE_ADDR=%s %s cluster show quickstart\n  GROVE_ADDR=%s %s cluster resize -capacity 5 -wait quickstart\n",
			nodes[0].Data["address"], a.Addr, self, a.Addr, self)
	}
	fmt.Fprintln(env.Stdout, "Press Ctrl-C to stop.")
	<-ctx.Done()
	if *keep {
		return nil
	}
	fmt.Fprintln(env.Stdout, "\nDestroying the quickstart definition set...")
	stop, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	plan, err = hcl.MakePlan(stop, c, def, true)
	if err != nil {
		return err
	}
	return (&hcl.Applier{Client: c}).Apply(stop, plan, false)
}

// fetch reads a node's page, waiting briefly for its server to come up.
func fetch(ctx context.Context, url string) string {
	deadline := time.Now().Add(5 * time.Second)
	for {
		resp, err := http.Get(url)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			return strings.TrimSpace(string(b))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return "(not answering yet: " + err.Error() + ")"
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// runDemoImage imports a static grove binary (CGO_ENABLED=0) as the image
// the container examples run: `grove demo-http` on $GROVE_NODE_PORT.
func runDemoImage(ctx context.Context, env *Env, args []string) error {
	g := newGlobals(env)
	fs := flagSet("demo-image", g)
	binary := fs.String("binary", "", "static grove binary (default: this one)")
	tag := fs.String("tag", container.DemoImage, "image tag")
	if _, err := parseFlags(fs, args); err != nil {
		return err
	}
	host := os.Getenv("DOCKER_HOST")
	if host == "" {
		return usagef("DOCKER_HOST is not set: start an engine with `make engine-up` and export what it prints")
	}
	if *binary == "" {
		exe, err := os.Executable()
		if err != nil {
			return err
		}
		*binary = exe
	}
	if err := container.ImportBinary(ctx, host, *binary, *tag, "demo-http"); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Imported %s as %s.\n", *binary, *tag)
	return nil
}
