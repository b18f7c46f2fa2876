package cli

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

var (
	profileRes = &resource{name: "profile", plural: "profiles", path: "/v1/profiles", columns: []column{
		{"ID", "id", true}, {"NAME", "name", false}, {"TYPE", "type", false}, {"CREATED", "created_at", false}}}
	policyRes = &resource{name: "policy", plural: "policies", path: "/v1/policies", columns: []column{
		{"ID", "id", true}, {"NAME", "name", false}, {"TYPE", "type", false}, {"CREATED", "created_at", false}}}
	clusterRes = &resource{name: "cluster", plural: "clusters", path: "/v1/clusters", columns: []column{
		{"ID", "id", true}, {"NAME", "name", false}, {"STATUS", "status", false}, {"DESIRED", "desired_capacity", false},
		{"NODES", "nodes", false}, {"PROFILE", "profile_name", false}, {"REASON", "status_reason", false}}}
	nodeRes = &resource{name: "node", plural: "nodes", path: "/v1/nodes", columns: []column{
		{"ID", "id", true}, {"NAME", "name", false}, {"INDEX", "index", false}, {"STATUS", "status", false},
		{"CLUSTER", "cluster_id", true}, {"PHYSICAL ID", "physical_id", false}, {"ADDRESS", "data.address", false}, {"REASON", "status_reason", false}}}
	actionRes = &resource{name: "action", plural: "actions", path: "/v1/actions", columns: []column{
		{"ID", "id", true}, {"NAME", "name", false}, {"ACTION", "action", false}, {"STATUS", "status", false},
		{"TARGET", "target", true}, {"CREATED", "created_at", false}, {"REASON", "status_reason", false}}}
	eventRes = &resource{name: "event", plural: "events", path: "/v1/events", columns: []column{
		{"TIMESTAMP", "timestamp", false}, {"TYPE", "otype", false}, {"OBJECT", "oid", true}, {"ACTION", "action", false},
		{"STATUS", "status", false}, {"LEVEL", "level", false}, {"REASON", "status_reason", false}}}
)

func specCreate(r *resource) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet(r.name+" create", g)
		specFile := fs.String("spec-file", "", "YAML or JSON spec file with type, version and properties (- for stdin)")
		var meta multiFlag
		if r.name == "profile" {
			fs.Var(&meta, "metadata", "KEY=VALUE metadata (repeatable)")
		}
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 || *specFile == "" {
			return usagef("usage: grove %s create -spec-file FILE <name>", r.name)
		}
		spec, err := readSpec(env, *specFile)
		if err != nil {
			return err
		}
		body := map[string]any{"name": pos[0], "spec": spec}
		if len(meta) > 0 {
			m, err := kv(meta)
			if err != nil {
				return err
			}
			body["metadata"] = m
		}
		var out map[string]any
		if _, err := g.client().Do(ctx, http.MethodPost, r.path, nil, map[string]any{r.name: body}, &out); err != nil {
			return err
		}
		if g.json {
			return printJSON(env.Stdout, out[r.name])
		}
		fmt.Fprintf(env.Stdout, "%s %s created with id %s.\n", capitalize(r.name), pos[0], lookup(out[r.name], "id"))
		return nil
	}
}

func specValidate(r *resource) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet(r.name+" validate", g)
		specFile := fs.String("spec-file", "", "YAML or JSON spec file")
		if _, err := parseFlags(fs, args); err != nil {
			return err
		}
		if *specFile == "" {
			return usagef("usage: grove %s validate -spec-file FILE", r.name)
		}
		spec, err := readSpec(env, *specFile)
		if err != nil {
			return err
		}
		if _, err := g.client().Do(ctx, http.MethodPost, r.path+"/validate", nil, map[string]any{r.name: map[string]any{"spec": spec}}, nil); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "The %s spec is valid.\n", r.name)
		return nil
	}
}

func renameVerb(r *resource) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet(r.name+" update", g)
		name := fs.String("name", "", "new name")
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 || *name == "" {
			return usagef("usage: grove %s update -name NEW <id or name>", r.name)
		}
		if _, err := g.client().Do(ctx, http.MethodPatch, r.path+"/"+url.PathEscape(pos[0]), nil, map[string]any{r.name: map[string]any{"name": *name}}, nil); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "%s %s renamed to %s.\n", capitalize(r.name), pos[0], *name)
		return nil
	}
}

func typesVerb(kind string) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet(kind+" types", g)
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		c := g.client()
		if len(pos) == 1 {
			out, err := get(ctx, c, "/v1/"+kind+"-types/"+url.PathEscape(pos[0]), nil)
			if err != nil {
				return err
			}
			if g.json {
				return printJSON(env.Stdout, out[kind+"_type"])
			}
			return details(env, out[kind+"_type"])
		}
		out, err := get(ctx, c, "/v1/"+kind+"-types", nil)
		if err != nil {
			return err
		}
		items, _ := out[kind+"_types"].([]any)
		if g.json {
			return printJSON(env.Stdout, items)
		}
		return table(env, []column{{"NAME", "name", false}, {"VERSION", "version", false}}, items)
	}
}

// profileHosts lists where a profile type's driver can place nodes.
func profileHosts(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("profile hosts", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return fmt.Errorf("usage: grove profile hosts TYPE (for example container.docker)")
	}
	out, err := get(ctx, g.client(), "/v1/profile-types/"+url.PathEscape(pos[0])+"/hosts", nil)
	if err != nil {
		return err
	}
	items, _ := out["hosts"].([]any)
	if g.json {
		return printJSON(env.Stdout, items)
	}
	rows := make([]any, 0, len(items))
	for _, it := range items {
		h, _ := it.(map[string]any)
		rows = append(rows, map[string]any{"name": h["name"], "attributes": pairs(h["attributes"]), "load": pairs(h["load"]), "error": h["error"]})
	}
	return table(env, []column{{"NAME", "name", false}, {"LOAD", "load", false}, {"ATTRIBUTES", "attributes", false}, {"ERROR", "error", false}}, rows)
}

// pairs renders a JSON object as sorted key=value pairs.
func pairs(v any) string {
	m, _ := v.(map[string]any)
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%v", k, m[k])
	}
	return strings.Join(parts, " ")
}

func clusterCreate(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster create", g)
	profile := fs.String("profile", "", "profile id or name (required)")
	desired := fs.Int("desired-capacity", 0, "number of nodes")
	minSize := fs.Int("min-size", 0, "minimum size")
	maxSize := fs.Int("max-size", -1, "maximum size (-1 unbounded)")
	timeout := fs.Int("timeout", 0, "action timeout in seconds (0: the default)")
	var meta, config multiFlag
	fs.Var(&meta, "metadata", "KEY=VALUE metadata (repeatable)")
	fs.Var(&config, "config", "KEY=VALUE config, e.g. node.name.format=web-$3I (repeatable)")
	fs.BoolVar(&g.wait, "wait", false, "wait until the cluster is created and its nodes passed their first health check; a node that fails it fails the command")
	g.healthFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *profile == "" {
		return usagef("usage: grove cluster create -profile PROFILE [-desired-capacity N] <name>")
	}
	body := map[string]any{"name": pos[0], "profile_id": *profile, "desired_capacity": *desired, "min_size": *minSize, "max_size": *maxSize}
	if *timeout > 0 {
		body["timeout"] = *timeout
	}
	for k, v := range map[string]multiFlag{"metadata": meta, "config": config} {
		if len(v) > 0 {
			m, err := kv(v)
			if err != nil {
				return err
			}
			body[k] = m
		}
	}
	c := g.client()
	var out struct {
		Cluster api.Cluster `json:"cluster"`
	}
	resp, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": body}, &out)
	if err != nil {
		return err
	}
	return followThen(ctx, env, c, g, resp.ActionID(), "Creating cluster "+pos[0], firstHealth(ctx, c, g, out.Cluster.ID, pos[0]))
}

// firstHealth is the check -wait runs once a cluster's creation succeeded:
// its new nodes are watched for their first health check, and any that
// fails it fails the command.
func firstHealth(ctx context.Context, c *api.Client, g *globals, clusterID, name string) func(*progress, *api.Action) error {
	return func(p *progress, a *api.Action) error {
		total, failed, err := watchHealth(ctx, p, c, clusterID, name, "Cluster "+name, g.healthWatch)
		if err != nil {
			return err
		}
		if len(failed) > 0 {
			return healthError(name, total, failed, g.healthWatch)
		}
		return nil
	}
}

func clusterUpdate(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster update", g)
	name := fs.String("name", "", "new name")
	profile := fs.String("profile", "", "new profile (same type); nodes are updated")
	profileOnly := fs.Bool("profile-only", false, "only new nodes use the new profile")
	desired := fs.String("desired-capacity", "", "new desired capacity")
	minSize := fs.String("min-size", "", "new minimum size")
	maxSize := fs.String("max-size", "", "new maximum size")
	timeout := fs.String("timeout", "", "new timeout")
	var meta multiFlag
	fs.Var(&meta, "metadata", "KEY=VALUE metadata to merge (repeatable)")
	fs.BoolVar(&g.wait, "wait", false, "wait until the update finishes")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove cluster update [flags] <cluster>")
	}
	body := map[string]any{}
	if *name != "" {
		body["name"] = *name
	}
	if *profile != "" {
		body["profile_id"] = *profile
		body["profile_only"] = *profileOnly
	}
	for k, v := range map[string]string{"desired_capacity": *desired, "min_size": *minSize, "max_size": *maxSize, "timeout": *timeout} {
		if v != "" {
			n, err := strconv.Atoi(v)
			if err != nil {
				return usagef("-%s must be an integer, got %q", strings.ReplaceAll(k, "_", "-"), v)
			}
			body[k] = n
		}
	}
	if len(meta) > 0 {
		m, err := kv(meta)
		if err != nil {
			return err
		}
		body["metadata"] = m
	}
	c := g.client()
	resp, err := c.Do(ctx, http.MethodPatch, "/v1/clusters/"+url.PathEscape(pos[0]), nil, map[string]any{"cluster": body}, nil)
	if err != nil {
		return err
	}
	return follow(ctx, env, c, g, resp.ActionID(), "Updating cluster "+pos[0])
}

func clusterActionFollow(ctx context.Context, env *Env, g *globals, cluster, name string, params map[string]any) error {
	c := g.client()
	id, err := c.ClusterAction(ctx, cluster, name, params)
	if err != nil {
		return err
	}
	return follow(ctx, env, c, g, id, fmt.Sprintf("%s on cluster %s", strings.ReplaceAll(name, "_", " "), cluster))
}

func clusterResize(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster resize", g)
	capacity := fs.String("capacity", "", "EXACT_CAPACITY: the new size")
	adjust := fs.String("adjustment", "", "CHANGE_IN_CAPACITY: nodes to add (negative to remove)")
	percent := fs.String("percentage", "", "CHANGE_IN_PERCENTAGE: percent to grow (negative to shrink)")
	minStep := fs.String("min-step", "", "with -percentage: the smallest step")
	minSize := fs.String("min-size", "", "new minimum size")
	maxSize := fs.String("max-size", "", "new maximum size")
	strict := fs.Bool("strict", true, "refuse instead of truncating to the size bounds")
	fs.BoolVar(&g.wait, "wait", false, "wait until the resize finishes")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove cluster resize (-capacity N | -adjustment N | -percentage P) [-min-size N] [-max-size N] <cluster>")
	}
	params := map[string]any{"strict": *strict}
	n := 0
	for typ, v := range map[string]string{"EXACT_CAPACITY": *capacity, "CHANGE_IN_CAPACITY": *adjust, "CHANGE_IN_PERCENTAGE": *percent} {
		if v != "" {
			n++
			f, err := schema.ParseDecimal(v)
			if err != nil {
				return usagef("the resize amount must be a finite decimal number, got %q", v)
			}
			params["adjustment_type"], params["number"] = typ, f
		}
	}
	if n > 1 {
		return usagef("give only one of -capacity, -adjustment and -percentage")
	}
	for k, v := range map[string]string{"min_step": *minStep, "min_size": *minSize, "max_size": *maxSize} {
		if v != "" {
			i, err := strconv.Atoi(v)
			if err != nil {
				return usagef("-%s must be an integer, got %q", strings.ReplaceAll(k, "_", "-"), v)
			}
			params[k] = i
		}
	}
	return clusterActionFollow(ctx, env, g, pos[0], "resize", params)
}

func clusterScale(name string) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet("cluster "+name, g)
		count := fs.Int("count", 0, "number of nodes (default: what the policies decide, or 1)")
		fs.BoolVar(&g.wait, "wait", false, "wait until scaling finishes")
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("usage: grove cluster %s [-count N] <cluster>", strings.ReplaceAll(name, "_", "-"))
		}
		params := map[string]any{}
		// An explicit -count 0 must not read as "not given", which lets
		// the policies pick a count: asked to scale by nothing, scale-in
		// would remove a node.
		given := false
		fs.Visit(func(f *flag.Flag) { given = given || f.Name == "count" })
		if given {
			if *count < 1 {
				return usagef("-count must be a positive number of nodes, got %d; leave it out to let the cluster's policies decide", *count)
			}
			params["count"] = *count
		}
		return clusterActionFollow(ctx, env, g, pos[0], name, params)
	}
}

func clusterNodes(name string) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet("cluster "+name, g)
		destroy := fs.Bool("destroy", false, "destroy the removed nodes instead of keeping them as orphans (del-nodes)")
		fs.BoolVar(&g.wait, "wait", false, "wait until the action finishes")
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) < 2 {
			return usagef("usage: grove cluster %s <cluster> <node>...", strings.ReplaceAll(name, "_", "-"))
		}
		nodes := make([]any, len(pos)-1)
		for i, n := range pos[1:] {
			nodes[i] = n
		}
		params := map[string]any{"nodes": nodes}
		if name == "del_nodes" {
			params["destroy_after_deletion"] = *destroy
		}
		return clusterActionFollow(ctx, env, g, pos[0], name, params)
	}
}

func clusterReplace(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster replace-nodes", g)
	fs.BoolVar(&g.wait, "wait", false, "wait until the action finishes")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) < 2 {
		return usagef("usage: grove cluster replace-nodes <cluster> OLD=NEW...")
	}
	pairs, err := kv(pos[1:])
	if err != nil {
		return err
	}
	return clusterActionFollow(ctx, env, g, pos[0], "replace_nodes", map[string]any{"nodes": pairs})
}

func clusterSimple(name string) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet("cluster "+name, g)
		fs.BoolVar(&g.wait, "wait", false, "wait until the action finishes")
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("usage: grove cluster %s <cluster>", name)
		}
		return clusterExpectFollow(ctx, env, g, pos[0], name, nil)
	}
}

// clusterExpectFollow sends an action that may set a failover cluster's
// expectation (start and stop of a cluster its instance monitors run,
// switch, giveback). With -wait it waits past the action, which only
// sets the expectation, until the monitors reached it; one that failed
// fails the command with the reason.
func clusterExpectFollow(ctx context.Context, env *Env, g *globals, cluster, name string, params map[string]any) error {
	c := g.client()
	id, err := c.ClusterAction(ctx, cluster, name, params)
	if err != nil {
		return err
	}
	what := fmt.Sprintf("%s on cluster %s", name, cluster)
	return followThen(ctx, env, c, g, id, what, func(p *progress, a *api.Action) error {
		if !expectActions[a.Action] {
			return nil
		}
		return waitExpect(ctx, p, c, cluster, a.ID, what)
	})
}

// expectActions are the actions that set a failover cluster's
// expectation.
var expectActions = map[string]bool{"CLUSTER_EXPECT_START": true, "CLUSTER_EXPECT_STOP": true, "CLUSTER_SWITCH": true, "CLUSTER_GIVEBACK": true}

// waitExpect polls the cluster until the expectation actionID set has
// ended: nil when reached, an error with the reason when it failed, a
// freeze of the cluster cancelled it or another expectation replaced it.
func waitExpect(ctx context.Context, p *progress, c *api.Client, cluster, actionID, what string) error {
	start := time.Now()
	delay := 100 * time.Millisecond
	for {
		cl, err := c.GetCluster(ctx, cluster)
		if err != nil {
			p.end()
			return err
		}
		x := cl.Expect
		switch {
		case x == nil:
			p.end()
			return fmt.Errorf("%s: the cluster shows no expectation", what)
		case x.Action != actionID:
			p.end()
			return fmt.Errorf("%s: another command's %s replaced it before it was reached", what, cmp.Or(x.Kind, "expectation"))
		case x.Kind == "":
			p.end()
			if strings.HasPrefix(x.Result, "failed") || strings.HasPrefix(x.Result, "cancelled") {
				return fmt.Errorf("%s: %s", what, x.Result)
			}
			return nil
		}
		p.show(fmt.Sprintf("%s: the instance monitors are working toward it", what), time.Since(start))
		select {
		case <-ctx.Done():
			p.end()
			return fmt.Errorf("%s: stopped waiting for the instance monitors: %w", what, ctx.Err())
		case <-time.After(delay):
		}
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// clusterSwitch sends switch: the failover cluster moves to -host.
func clusterSwitch(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster switch", g)
	host := fs.String("host", "", "the host the cluster moves to (required)")
	fs.BoolVar(&g.wait, "wait", false, "wait until the cluster runs on the host")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *host == "" {
		return usagef("usage: grove cluster switch -host HOST <cluster>")
	}
	return clusterExpectFollow(ctx, env, g, pos[0], "switch", map[string]any{"host": *host})
}

// clusterInstanceCommand sends freeze, thaw or clear: the monitor command
// on the instance of one host (-host) or of every host of a failover or
// flex cluster.
func clusterInstanceCommand(name string) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet("cluster "+name, g)
		host := fs.String("host", "", "only the instance on this host (default: every host's)")
		fs.BoolVar(&g.wait, "wait", false, "wait until the action finishes")
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("usage: grove cluster %s [-host HOST] <cluster>", name)
		}
		params := map[string]any{}
		if *host != "" {
			params["host"] = *host
		}
		return clusterActionFollow(ctx, env, g, pos[0], name, params)
	}
}

func clusterRecover(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster recover", g)
	op := fs.String("operation", "", "RECREATE, REBOOT or REBUILD")
	check := fs.Bool("check", false, "check every node first and recover only the unhealthy")
	capacity := fs.Bool("check-capacity", false, "then create or delete nodes to match desired_capacity")
	fs.BoolVar(&g.wait, "wait", false, "wait until recovery finishes")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove cluster recover [flags] <cluster>")
	}
	params := map[string]any{"check": *check, "check_capacity": *capacity}
	if *op != "" {
		params["operation"] = *op
	}
	return clusterActionFollow(ctx, env, g, pos[0], "recover", params)
}

// clusterCompleteLifecycle sends complete_lifecycle: the node deletion
// whose action id the lifecycle hook was given as its token goes on.
func clusterCompleteLifecycle(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster complete-lifecycle", g)
	fs.BoolVar(&g.wait, "wait", false, "wait until the node is deleted")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("usage: grove cluster complete-lifecycle <cluster> <lifecycle_action_token>")
	}
	return clusterActionFollow(ctx, env, g, pos[0], "complete_lifecycle", map[string]any{"lifecycle_action_token": pos[1]})
}

func clusterPolicy(name string) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet("cluster "+name, g)
		enabled := fs.String("enabled", "", "true or false")
		priority := fs.String("priority", "", "check order; lower runs first")
		fs.BoolVar(&g.wait, "wait", false, "wait until the action finishes")
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 2 {
			return usagef("usage: grove cluster %s <cluster> <policy>", strings.ReplaceAll(name, "_", "-"))
		}
		params := map[string]any{"policy_id": pos[1]}
		if *enabled != "" {
			b, err := strconv.ParseBool(*enabled)
			if err != nil {
				return usagef("-enabled must be true or false")
			}
			params["enabled"] = b
		}
		if *priority != "" {
			n, err := strconv.Atoi(*priority)
			if err != nil {
				return usagef("-priority must be an integer")
			}
			params["priority"] = n
		}
		return clusterActionFollow(ctx, env, g, pos[0], name, params)
	}
}

func clusterPolicies(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster policies", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove cluster policies <cluster>")
	}
	out, err := get(ctx, g.client(), "/v1/clusters/"+url.PathEscape(pos[0])+"/policies", nil)
	if err != nil {
		return err
	}
	items, _ := out["cluster_policies"].([]any)
	if g.json {
		return printJSON(env.Stdout, items)
	}
	return table(env, []column{{"POLICY", "policy_name", false}, {"TYPE", "policy_type", false}, {"ENABLED", "enabled", false}, {"PRIORITY", "priority", false}}, items)
}

func nodeCreate(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("node create", g)
	profile := fs.String("profile", "", "profile id or name (required)")
	cluster := fs.String("cluster", "", "cluster to join")
	role := fs.String("role", "", "role")
	fs.BoolVar(&g.wait, "wait", false, "wait until the node is created")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *profile == "" {
		return usagef("usage: grove node create -profile PROFILE [-cluster CLUSTER] <name>")
	}
	body := map[string]any{"name": pos[0], "profile_id": *profile, "role": *role}
	if *cluster != "" {
		body["cluster_id"] = *cluster
	}
	c := g.client()
	resp, err := c.Do(ctx, http.MethodPost, "/v1/nodes", nil, map[string]any{"node": body}, nil)
	if err != nil {
		return err
	}
	return follow(ctx, env, c, g, resp.ActionID(), "Creating node "+pos[0])
}

func nodeUpdate(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("node update", g)
	name := fs.String("name", "", "new name")
	profile := fs.String("profile", "", "new profile (same type)")
	role := fs.String("role", "", "new role")
	tainted := fs.String("tainted", "", "true or false")
	fs.BoolVar(&g.wait, "wait", false, "wait until the update finishes")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove node update [flags] <node>")
	}
	body := map[string]any{}
	for k, v := range map[string]string{"name": *name, "profile_id": *profile, "role": *role} {
		if v != "" {
			body[k] = v
		}
	}
	if *tainted != "" {
		b, err := strconv.ParseBool(*tainted)
		if err != nil {
			return usagef("-tainted must be true or false")
		}
		body["tainted"] = b
	}
	c := g.client()
	resp, err := c.Do(ctx, http.MethodPatch, "/v1/nodes/"+url.PathEscape(pos[0]), nil, map[string]any{"node": body}, nil)
	if err != nil {
		return err
	}
	return follow(ctx, env, c, g, resp.ActionID(), "Updating node "+pos[0])
}

func nodeAction(name string) verb {
	return func(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
		fs := flagSet("node "+name, g)
		op := fs.String("operation", "", "recover: RECREATE, REBOOT or REBUILD")
		fs.BoolVar(&g.wait, "wait", false, "wait until the action finishes")
		pos, err := parseFlags(fs, args)
		if err != nil {
			return err
		}
		if len(pos) != 1 {
			return usagef("usage: grove node %s <node>", name)
		}
		params := map[string]any{}
		if *op != "" {
			params["operation"] = *op
		}
		c := g.client()
		resp, err := c.Do(ctx, http.MethodPost, "/v1/nodes/"+url.PathEscape(pos[0])+"/actions", nil, map[string]any{name: params}, nil)
		if err != nil {
			return err
		}
		return follow(ctx, env, c, g, resp.ActionID(), name+" on node "+pos[0])
	}
}

func actionCancel(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("action cancel", g)
	force := fs.Bool("force", false, "mark cancelled at once and release locks")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove action cancel <action>")
	}
	q := url.Values{}
	if *force {
		q.Set("force", "true")
	}
	if _, err := g.client().Do(ctx, http.MethodPatch, "/v1/actions/"+url.PathEscape(pos[0]), q, map[string]any{"action": map[string]any{"status": "CANCELLED"}}, nil); err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "Cancellation of action %s requested.\n", pos[0])
	return nil
}

func actionWait(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("action wait", g)
	g.healthFlag(fs)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove action wait <action>")
	}
	g.wait = true
	c := g.client()
	// Following a cluster's creation (after Ctrl-C stopped
	// `cluster create -wait`) watches its new nodes' health as that did.
	return followThen(ctx, env, c, g, pos[0], "Action "+pos[0], func(p *progress, a *api.Action) error {
		if a.Action != "CLUSTER_CREATE" {
			return nil
		}
		cl, err := c.GetCluster(ctx, a.Target)
		if err != nil {
			return err
		}
		return firstHealth(ctx, c, g, cl.ID, cl.Name)(p, a)
	})
}

// clusterStatus shows desired against actual, each node's health and
// restarts, and the rolling update in progress.
func clusterStatus(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster status", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove cluster status <cluster>")
	}
	c := g.client()
	cl, err := c.GetCluster(ctx, pos[0])
	if err != nil {
		return err
	}
	nodes, err := c.ListNodes(ctx, url.Values{"cluster_id": {cl.ID}, "sort": {"index"}})
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, map[string]any{"cluster": cl, "nodes": nodes, "update": cl.Data["update"]})
	}
	active := 0
	for _, n := range nodes {
		if n.Status == "ACTIVE" {
			active++
		}
	}
	fmt.Fprintf(env.Stdout, "Cluster %s: %s\n  %s\n", cl.Name, cl.Status, cl.StatusReason)
	if cl.RunState != "" {
		fmt.Fprintf(env.Stdout, "  state %s", cl.RunState)
		if cl.RunReason != "" {
			fmt.Fprintf(env.Stdout, ": %s", cl.RunReason)
		}
		fmt.Fprintln(env.Stdout)
	}
	fmt.Fprintf(env.Stdout, "  desired %d, actual %d (%d active), min %d, max %d, profile %s\n\n", cl.DesiredCapacity, len(nodes), active, cl.MinSize, cl.MaxSize, cl.ProfileName)
	w := tabwriter.NewWriter(env.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "NODE\tINDEX\tSTATUS\tRESTARTS\tPROFILE\tADDRESS\tREASON")
	for _, n := range nodes {
		restarts := 0
		if r, ok := n.Data["restarts"].(map[string]any); ok {
			if c, ok := r["count"].(float64); ok {
				restarts = int(c)
			}
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%d\t%s\t%s\t%s\n", n.Name, n.Index, n.Status, restarts, n.ProfileName, cell(n.Data["address"], false), n.StatusReason)
	}
	w.Flush()
	if len(cl.Instances) > 0 {
		// A failover cluster: each host's instance as OpenSVC shows
		// it, <host> <status> <monitor state> <flags> (docs/failover.md).
		fmt.Fprintln(env.Stdout, "\nInstances:")
		var buf strings.Builder
		w := tabwriter.NewWriter(&buf, 0, 2, 2, ' ', 0)
		fmt.Fprintln(w, "  HOST\tSTATUS\tMONITOR\tFLAGS\tREASON")
		for _, x := range cl.Instances {
			flags := x.Flags
			if flags == "" {
				flags = "-"
			}
			fmt.Fprintf(w, "  %s\t%s\t%s\t%s\t%s\n", x.Host, x.Status, x.State, flags, x.Reason)
		}
		w.Flush()
		// Without a reason a row would end in the padding of its column.
		for _, line := range strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n") {
			fmt.Fprintln(env.Stdout, strings.TrimRight(line, " "))
		}
	}
	if x := cl.Expect; x != nil {
		// The operator's expectation the monitors work toward, or how the
		// last one ended.
		switch {
		case x.Kind == "switch":
			fmt.Fprintf(env.Stdout, "\nExpect: switch to %s (pending)\n", x.Host)
		case x.Kind != "":
			fmt.Fprintf(env.Stdout, "\nExpect: %s (pending)\n", x.Kind)
		case x.Result != "":
			fmt.Fprintf(env.Stdout, "\nLast expectation: %s\n", x.Result)
		}
	}
	if u, ok := cl.Data["update"].(map[string]any); ok {
		fmt.Fprintf(env.Stdout, "\nUpdate: %v (%v), batch %v of %v, %v of %v nodes updated, %v failed\n", u["status"], u["order"], u["batch"], u["batches"],
			u["updated"], u["total"], u["failures"])
		if u["status"] == api.UpdatePaused {
			fmt.Fprintf(env.Stdout, "  Resume with `grove cluster update-resume %s`, or roll back with `grove cluster update-rollback %s`.\n", cl.Name, cl.Name)
		}
	}
	return nil
}

// capitalize upper-cases the first letter of a resource's name ("profile"),
// which is ASCII, to start a sentence.
func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// expectStartHelp and expectStopHelp are the help of cluster start and
// stop: on a failover cluster they are the instance monitors' commands.
const expectStartHelp = "On a failover cluster whose instance monitors run it (docs/failover.md),\n" +
	"start sets the expectation start: the placement's leader starts at once,\n" +
	"whatever orchestrate says, its frozen instances thawed first. With -wait,\n" +
	"the command waits until the cluster is up."

const expectStopHelp = "On a failover cluster whose instance monitors run it (docs/failover.md),\n" +
	"stop freezes every instance and sets the expectation stop: every instance\n" +
	"stops, and nothing restarts it until a start or a thaw. With -wait, the\n" +
	"command waits until every instance is down."

// freezeHelp is the help of cluster freeze and thaw.
const freezeHelp = "Without -host, the command is for every agent host and every host with an\n" +
	"instance of the cluster. The cluster's grove.failover topology must be\n" +
	"failover or flex. See docs/failover.md."
