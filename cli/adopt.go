package cli

import (
	"context"
	"net/http"

	"github.com/grovehq/grove/api"
)

// nodeAdopt is `grove node adopt -type TYPE IDENTITY`: Senlin's node
// adoption, an existing resource (a container, a process, a Nova server, a
// vSphere VM) made an orphan node with a profile describing it; with
// -preview, only the profile spec it would get.
func nodeAdopt(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("node adopt", g)
	typ := fs.String("type", "", "the profile type of the resource, such as os.nova.server-1.0 (required)")
	name := fs.String("name", "", "the new node's name (default: node- and a random suffix)")
	role := fs.String("role", "", "the new node's role")
	preview := fs.Bool("preview", false, "only print the profile spec the resource would get; adopt nothing")
	snapshot := fs.Bool("snapshot", false, "snapshot the resource first and make the profile from the snapshot (os.nova.server: the server's image becomes a snapshot of it); drivers that cannot refuse it")
	var overrides, metadata multiFlag
	fs.Var(&overrides, "override", "a profile property replacing the one read from the resource, as KEY=VALUE (repeatable); JSON values such as true, 3 or [\"a\"] keep their type")
	fs.Var(&metadata, "metadata", "node metadata as KEY=VALUE (repeatable)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *typ == "" {
		return usagef("usage: grove node adopt -type TYPE [options] IDENTITY")
	}
	if *preview && (*name != "" || *role != "" || len(metadata) > 0) {
		return usagef("-name, -role and -metadata are the new node's; -preview adopts nothing")
	}
	ov, err := opParams(overrides)
	if err != nil {
		return err
	}
	body := map[string]any{"identity": pos[0], "type": *typ, "overrides": ov, "snapshot": *snapshot}
	c := g.client()
	if *preview {
		var out struct {
			Profile map[string]any `json:"node_profile"`
		}
		if _, err := c.Do(ctx, http.MethodPost, "/v1/nodes/adopt-preview", nil, body, &out); err != nil {
			return err
		}
		if g.json {
			return printJSON(env.Stdout, out.Profile)
		}
		return details(env, out.Profile)
	}
	md, err := kv(metadata)
	if err != nil {
		return err
	}
	body["metadata"] = md
	if *name != "" {
		body["name"] = *name
	}
	if *role != "" {
		body["role"] = *role
	}
	var out struct {
		Node map[string]any `json:"node"`
	}
	if _, err := c.Do(ctx, http.MethodPost, "/v1/nodes/adopt", nil, body, &out); err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, out.Node)
	}
	return details(env, out.Node)
}
