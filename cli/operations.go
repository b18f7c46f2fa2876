package cli

import (
	"context"
	"encoding/json"

	"github.com/grovehq/grove/api"
)

// opParams reads -param KEY=VALUE pairs. A value that is JSON (true, 3,
// "text", [1]) is taken as that, so an operation's boolean and integer
// parameters can be given; any other value is a string.
func opParams(pairs []string) (map[string]any, error) {
	raw, err := kv(pairs)
	if err != nil {
		return nil, err
	}
	for k, v := range raw {
		var decoded any
		if json.Unmarshal([]byte(v.(string)), &decoded) == nil {
			raw[k] = decoded
		}
	}
	return raw, nil
}

// nodeOp is `grove node op NODE OPERATION`: one of the node's profile
// type's operations (`grove profile ops TYPE` lists them).
func nodeOp(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("node op", g)
	var params multiFlag
	fs.Var(&params, "param", "an operation parameter as KEY=VALUE (repeatable); JSON values such as true or 3 keep their type")
	fs.BoolVar(&g.wait, "wait", false, "wait until the action finishes")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("usage: grove node op [options] NODE OPERATION")
	}
	p, err := opParams(params)
	if err != nil {
		return err
	}
	c := g.client()
	id, err := c.NodeOperation(ctx, pos[0], pos[1], p)
	if err != nil {
		return err
	}
	return follow(ctx, env, c, g, id, pos[1]+" on node "+pos[0])
}

// clusterOp is `grove cluster op CLUSTER OPERATION`: the operation on every
// node of the cluster, or on those the filters match.
func clusterOp(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster op", g)
	var params, filters multiFlag
	fs.Var(&params, "param", "an operation parameter as KEY=VALUE (repeatable); JSON values such as true or 3 keep their type")
	fs.Var(&filters, "filter", "only nodes whose name, profile_id, status or role is VALUE, as KEY=VALUE (repeatable)")
	fs.BoolVar(&g.wait, "wait", false, "wait until the action finishes")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 2 {
		return usagef("usage: grove cluster op [options] CLUSTER OPERATION")
	}
	p, err := opParams(params)
	if err != nil {
		return err
	}
	var f map[string]any
	if len(filters) > 0 {
		if f, err = kv(filters); err != nil {
			return err
		}
	}
	c := g.client()
	id, err := c.ClusterOperation(ctx, pos[0], pos[1], f, p)
	if err != nil {
		return err
	}
	return follow(ctx, env, c, g, id, pos[1]+" on cluster "+pos[0])
}
