package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/grovehq/grove/api"
)

// resource describes one API collection for the generic commands.
type resource struct {
	name    string // singular, the JSON envelope key
	plural  string
	path    string
	columns []column
}

type column struct {
	title string
	path  string // dotted path into the object
	short bool   // show ids short
}

type verb func(ctx context.Context, env *Env, c *api.Client, g *globals, args []string) error

type globals struct {
	address string
	token   string
	tls     api.TLSOptions
	json    bool
	wait    bool
	// healthWatch is how long -wait watches new nodes for their first
	// health check (commands that create nodes).
	healthWatch time.Duration

	help   *flagCapture // set in help mode: see entry
	stderr io.Writer    // deprecation notes
}

func (g *globals) register(fs *flag.FlagSet) {
	fs.StringVar(&g.address, "address", "", "agent address, http:// or https:// (default $GROVE_ADDR or "+api.DefaultAddress+")")
	fs.StringVar(&g.token, "token", "", "token sent to the agent (default $GROVE_TOKEN)")
	fs.StringVar(&g.tls.CACert, "ca-cert", "", "PEM file of the CA that signed the agent's certificate (default $GROVE_CACERT)")
	fs.StringVar(&g.tls.ClientCert, "client-cert", "", "PEM client certificate, for an agent with tls.client_ca_file (default $GROVE_CLIENT_CERT)")
	fs.StringVar(&g.tls.ClientKey, "client-key", "", "PEM key of -client-cert (default $GROVE_CLIENT_KEY)")
	fs.BoolVar(&g.tls.SkipVerify, "tls-skip-verify", false, "accept any agent certificate; for development only: anyone on the path can read the token")
	fs.BoolVar(&g.json, "json", false, "print JSON instead of a table")
}

// verbCmd adapts a verb to the command table's signature.
func verbCmd(v verb) func(ctx context.Context, env *Env, args []string) error {
	return func(ctx context.Context, env *Env, args []string) error {
		return v(ctx, env, nil, newGlobals(env), args)
	}
}

// client is the agent client the flags (and their environment defaults)
// describe; a CA or client certificate that cannot be loaded fails its
// first request.
func (g *globals) client() *api.Client {
	return api.New(api.Options{Address: g.address, Token: g.token, TLS: g.tls})
}

func get(ctx context.Context, c *api.Client, path string, query url.Values) (map[string]any, error) {
	var out map[string]any
	_, err := c.Do(ctx, http.MethodGet, path, query, nil, &out)
	return out, err
}

// filter is one list filter: its flag, the query parameter it sets, and
// the old spelling still accepted for one release.
type filter struct {
	flag, param, help, old string
	// resolve, when set, turns the flag's value into the parameter's: a
	// cluster's name into its id (events and actions match cluster ids).
	resolve func(ctx context.Context, c *api.Client, v string, flags map[string]string) (string, error)
}

var clusterFilter = filter{flag: "cluster", param: "cluster_id", help: "only those of this cluster: its name, id or short id", old: "cluster_id",
	resolve: func(ctx context.Context, c *api.Client, v string, _ map[string]string) (string, error) {
		cl, err := c.GetCluster(ctx, v)
		if err != nil {
			return "", err
		}
		return cl.ID, nil
	}}

// objectNameFilter finds events by their object's name: the node or
// cluster of that name, by id, since the engine's action events record the
// object's id and not its name.
var objectNameFilter = filter{flag: "object-name", param: "oid", help: "only those about the node or cluster of this name (with -object-type, of that type)", old: "oname",
	resolve: func(ctx context.Context, c *api.Client, v string, flags map[string]string) (string, error) {
		if flags["object-id"] != "" {
			return "", usagef("give -object-id or -object-name, not both")
		}
		var ids, kinds []string
		typ := strings.ToUpper(flags["object-type"])
		if typ == "" || typ == "NODE" {
			n, err := c.GetNode(ctx, v)
			if err != nil && !api.IsNotFound(err) {
				return "", err
			}
			if err == nil {
				ids, kinds = append(ids, n.ID), append(kinds, "a node")
			}
		}
		if typ == "" || typ == "CLUSTER" {
			cl, err := c.GetCluster(ctx, v)
			if err != nil && !api.IsNotFound(err) {
				return "", err
			}
			if err == nil {
				ids, kinds = append(ids, cl.ID), append(kinds, "a cluster")
			}
		}
		switch len(ids) {
		case 0:
			return "", fmt.Errorf("no node or cluster is named %q", v)
		case 1:
			return ids[0], nil
		}
		return "", usagef("both %s are named %q; add -object-type NODE or CLUSTER", strings.Join(kinds, " and "), v)
	}}

// newestFirst is the sort of the lists that grow with every action: actions
// and events are listed newest first, a page at a time.
var newestFirst = map[string]string{"action": "created_at:desc", "event": "timestamp:desc"}

// defaultPage is how many actions or events a list shows unless -limit says.
const defaultPage = 20

func listVerb(r *resource, filters ...filter) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet(r.name+" list", g)
		sortDefault, paged := newestFirst[r.name]
		limitHelp, limitDefault := "return at most this many", 0
		if paged {
			limitHelp, limitDefault = "show at most this many, newest first (0: all)", defaultPage
		}
		limit := fs.Int("limit", limitDefault, limitHelp)
		var follow *bool
		if r.name == "event" {
			follow = fs.Bool("follow", false, "after the newest -limit events, show each new one as it is written, until Ctrl-C")
		}
		marker := fs.String("marker", "", "start after the "+r.name+" of this id (the last of the previous page)")
		sortBy := fs.String("sort", "", "sort keys, e.g. name:desc")
		vals := map[string]*string{}
		for _, f := range filters {
			vals[f.flag] = fs.String(f.flag, "", f.help)
			if f.old != "" {
				g.alias(fs, f.old, f.flag)
			}
		}
		if _, err := parseFlags(fs, args); err != nil {
			return err
		}
		if *limit < 0 {
			return usagef("-limit must be 0 or more, got %d", *limit)
		}
		given := map[string]string{}
		for k, v := range vals {
			given[k] = *v
		}
		c := g.client()
		q := url.Values{}
		for _, f := range filters {
			v := given[f.flag]
			if v == "" {
				continue
			}
			if f.resolve != nil {
				var err error
				if v, err = f.resolve(ctx, c, v, given); err != nil {
					return err
				}
			}
			q.Set(f.param, v)
		}
		if follow != nil && *follow {
			if *marker != "" || *sortBy != "" {
				return usagef("-follow shows events oldest first as they come; -marker and -sort do not apply to it")
			}
			q.Set("limit", strconv.Itoa(*limit))
			return followEvents(ctx, env, c, q, g.json)
		}
		if *limit > 0 {
			// One more than shown tells whether another page exists.
			q.Set("limit", strconv.Itoa(*limit+1))
		}
		if *marker != "" {
			q.Set("marker", *marker)
		}
		switch {
		case *sortBy != "":
			q.Set("sort", *sortBy)
		case paged:
			q.Set("sort", sortDefault)
		case r.name == "node" && q.Get("cluster_id") != "":
			q.Set("sort", "index") // a cluster's nodes read best in index order
		}
		out, err := get(ctx, c, r.path, q)
		if err != nil {
			return err
		}
		items, _ := out[r.plural].([]any)
		more := *limit > 0 && len(items) > *limit
		if more {
			items = items[:*limit]
		}
		if g.json {
			err = printJSON(env.Stdout, items)
		} else {
			err = table(env, r.columns, items)
		}
		if err == nil && more {
			last, _ := lookup(items[len(items)-1], "id").(string)
			fmt.Fprintf(env.Stderr, "Showing %s; more exist. Next page: %s\n",
				plural(len(items), r.name, r.plural), nextPage(r.name, fs, last))
		}
		return err
	}
}

// nextPage is the command line that lists the page after the one shown:
// the same command and flags with -marker set to the last id shown. The
// token is left out: it is a secret, and GROVE_TOKEN usually carries it.
func nextPage(name string, fs *flag.FlagSet, last string) string {
	parts := []string{"grove", name, "list"}
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "marker" || f.Name == "token" {
			return
		}
		name := f.Name
		if d, ok := f.Value.(*deprecatedFlag); ok {
			name = d.new // said in the spelling that stays
		}
		v := f.Value.String()
		if b, ok := f.Value.(interface{ IsBoolFlag() bool }); ok && b.IsBoolFlag() && v == "true" {
			parts = append(parts, "-"+name)
			return
		}
		parts = append(parts, "-"+name, shellQuote(v))
	})
	return strings.Join(append(parts, "-marker", last), " ")
}

// shellQuote quotes a value for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.:/=,@") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func showVerb(r *resource) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet(r.name+" show", g)
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("usage: grove %s show <id or name>", r.name)
		}
		out, err := get(ctx, g.client(), r.path+"/"+url.PathEscape(pos[0]), nil)
		if err != nil {
			return err
		}
		obj := out[r.name]
		if g.json {
			return printJSON(env.Stdout, obj)
		}
		return details(env, obj)
	}
}

func deleteVerb(r *resource, async bool) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet(r.name+" delete", g)
		force := false
		if async {
			fs.BoolVar(&g.wait, "wait", false, "wait for the deletion to finish")
			fs.BoolVar(&force, "force", false, "delete even while an action runs")
		}
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) == 0 {
			return usagef("usage: grove %s delete <id or name>...", r.name)
		}
		c := g.client()
		for _, id := range pos {
			q := url.Values{}
			if force {
				q.Set("force", "true")
			}
			resp, err := c.Do(ctx, http.MethodDelete, r.path+"/"+url.PathEscape(id), q, nil, nil)
			if err != nil {
				return err
			}
			if !async {
				fmt.Fprintf(env.Stdout, "%s %s deleted.\n", r.name, id)
				continue
			}
			if err := follow(ctx, env, c, g, resp.ActionID(), fmt.Sprintf("Deleting %s %s", r.name, id)); err != nil {
				return err
			}
		}
		return nil
	}
}

// follow reports an accepted action and, with -wait, follows it to its end
// with its progress on stderr.
func follow(ctx context.Context, env *Env, c *api.Client, g *globals, actionID, what string) error {
	return followThen(ctx, env, c, g, actionID, what, nil)
}

// followThen is follow with a check run once the action succeeded (the new
// nodes' first health check), which may fail the command.
func followThen(ctx context.Context, env *Env, c *api.Client, g *globals, actionID, what string, then func(*progress, *api.Action) error) error {
	if !g.wait {
		if g.json {
			return printJSON(env.Stdout, map[string]string{"action": actionID})
		}
		fmt.Fprintf(env.Stdout, "%s: action %s accepted. Follow it with `grove action show %s` or `grove action wait %s`.\n", what, actionID, actionID, actionID)
		return nil
	}
	p := newProgress(env, g.json)
	a, err := watchAction(ctx, p, c, actionID, what)
	if err != nil {
		return err
	}
	if then != nil {
		if err := then(p, a); err != nil {
			return err
		}
	}
	if g.json {
		return printJSON(env.Stdout, a)
	}
	fmt.Fprintf(env.Stdout, "%s: done (%s).\n", what, a.StatusReason)
	return nil
}

// table prints items with the resource's columns.
func table(env *Env, cols []column, items []any) error {
	w := tabwriter.NewWriter(env.Stdout, 0, 2, 2, ' ', 0)
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.title
	}
	fmt.Fprintln(w, strings.Join(titles, "\t"))
	for _, it := range items {
		vals := make([]string, len(cols))
		for i, c := range cols {
			vals[i] = cell(lookup(it, c.path), c.short)
		}
		fmt.Fprintln(w, strings.Join(vals, "\t"))
	}
	return w.Flush()
}

func lookup(v any, path string) any {
	for _, p := range strings.Split(path, ".") {
		m, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = m[p]
	}
	return v
}

func cell(v any, short bool) string {
	switch x := v.(type) {
	case nil:
		return "-"
	case string:
		if short && len(x) > 8 {
			return x[:8]
		}
		if x == "" {
			return "-"
		}
		return x
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		return strconv.Itoa(len(x))
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// details prints one object as YAML, which reads well for nested maps.
func details(env *Env, obj any) error {
	b, err := yaml.Marshal(obj)
	if err != nil {
		return err
	}
	_, err = env.Stdout.Write(b)
	return err
}

// readSpec reads a spec from a YAML or JSON file ("-" for stdin).
func readSpec(env *Env, path string) (map[string]any, error) {
	b, err := readInput(env.Stdin, "-spec-file", path, maxInputBytes)
	if err != nil {
		return nil, err
	}
	var spec map[string]any
	if err := yaml.Unmarshal(b, &spec); err != nil {
		return nil, fmt.Errorf("spec file %s is not valid YAML or JSON: %w", path, err)
	}
	return spec, nil
}
