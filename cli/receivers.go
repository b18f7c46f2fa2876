package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/grovehq/grove/api"
)

var receiverRes = &resource{name: "receiver", plural: "receivers", path: "/v1/receivers", columns: []column{
	{"ID", "id", true}, {"NAME", "name", false}, {"TYPE", "type", false}, {"CLUSTER", "cluster_id", true},
	{"ACTION", "action", false}, {"CREATED", "created_at", false}}}

// receiverCreate is `grove receiver create`: a webhook receiver, whose URL
// (it holds a secret) is printed this once.
func receiverCreate(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("receiver create", g)
	cluster := fs.String("cluster", "", "the cluster the webhook acts on: its name, id or short id (required)")
	action := fs.String("action", "", "the cluster action the webhook starts, e.g. CLUSTER_SCALE_OUT (required)")
	typ := fs.String("type", "webhook", "the receiver type; Grove serves webhook")
	var params multiFlag
	fs.Var(&params, "param", "a param of the action as KEY=VALUE (repeatable), e.g. count=2; a trigger's own params override these")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || *cluster == "" || *action == "" {
		return usagef("usage: grove receiver create -cluster CLUSTER -action ACTION [-param KEY=VALUE]... NAME")
	}
	p, err := kv(params)
	if err != nil {
		return err
	}
	rc, err := g.client().CreateReceiver(ctx, api.ReceiverCreate{Name: pos[0], Type: *typ, ClusterID: *cluster, Action: strings.ToUpper(*action), Params: p})
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, rc)
	}
	fmt.Fprintf(env.Stdout, "Receiver %s created: %s on cluster %s.\n", rc.ID, rc.Action, rc.ClusterID)
	fmt.Fprintf(env.Stdout, "Its webhook URL holds a secret, is shown this once and cannot be read again; store it now. POST to it (no token) to start the action:\n\n  %s\n", rc.AlarmURL())
	return nil
}
