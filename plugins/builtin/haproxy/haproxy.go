// Package haproxy is grove.policy.haproxy: it keeps an HAProxy backend's
// servers in step with a cluster's nodes through HAProxy's runtime API,
// without a reload. Nodes join after the actions that add or bring them
// back and leave before the actions that take them away, drained first;
// which nodes is decided by plugins/builtin/loadbalance/decide, shared with
// senlin.policy.loadbalance. Files: haproxy.go (the type, attach, detach,
// check), runtime.go (the runtime-API client).
package haproxy

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/grovehq/grove/plugins/builtin/loadbalance/decide"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is the policy's type name.
const TypeName = "grove.policy.haproxy"

// Senlin's reasons when a member cannot be added or removed; the node is
// marked WARNING with them.
const (
	ReasonAdd    = "Failed in adding node into lb pool."
	ReasonRemove = "Failed in removing node from lb pool."
)

// Priority is senlin.policy.loadbalance's: after the deletion policy (400)
// has chosen the victims, so the servers drained are the nodes deleted.
const Priority = 500

// Properties are the policy's properties, as the schema fills them in.
type Properties struct {
	Socket       string `json:"socket"`
	Backend      string `json:"backend"`
	Weight       int    `json:"weight"`
	Check        bool   `json:"check"`
	DrainTimeout int    `json:"drain_timeout"`
	Port         int    `json:"port"`
}

// Type returns the policy registration.
func Type() sdk.PolicyType {
	targets := make([]sdk.Target, len(decide.Targets))
	for i, t := range decide.Targets {
		targets[i] = sdk.Target{Phase: t[0], Action: t[1]}
	}
	return sdk.PolicyType{
		Type:     TypeName,
		Versions: []string{"1.0"},
		Description: "Keeps an HAProxy backend's servers in step with the cluster through the runtime API: new nodes are added once healthy, " +
			"leaving nodes are drained, then removed.",
		Schema: schema.Schema{
			"socket":  {Type: schema.String, Required: true, Description: "HAProxy's runtime API (a stats socket at level admin): an absolute unix socket path or host:port."},
			"backend": {Type: schema.String, Required: true, Description: "The backend the cluster's nodes are servers of; it must exist."},
			"weight": {Type: schema.Integer, Default: int64(1), Description: "Each server's weight.",
				Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(256))}},
			"check": {Type: schema.Boolean, Default: true, Description: "Run HAProxy's health checks on the servers."},
			"drain_timeout": {Type: schema.Integer, Default: int64(30), Description: "Seconds a leaving server is drained, waiting for its sessions to end, before it is removed.",
				Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(math.MaxInt32))}},
			"port": {Type: schema.Integer, Default: int64(0), Description: "The port nodes serve on when their address has none (Nova servers, vSphere VMs); 0 when every node's address has its port.",
				Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(65535))}},
		},
		Targets:   targets,
		Priority:  Priority,
		Singleton: true,
		Policy:    policy{},
		Validate: func(_ context.Context, spec sdk.Spec) schema.Diagnostics {
			var p Properties
			if err := spec.Decode(&p); err != nil {
				return schema.Diagnostics{{Field: "properties", Message: err.Error()}}
			}
			var ds schema.Diagnostics
			if _, err := ParseSocket(p.Socket); err != nil {
				ds = append(ds, schema.Diagnostic{Field: "properties.socket", Message: err.Error() + "."})
			}
			if err := checkWord(p.Backend); err != nil {
				ds = append(ds, schema.Diagnostic{Field: "properties.backend", Message: err.Error() + "."})
			}
			return ds
		},
	}
}

type policy struct{}

// ServerPrefix is the start of the name of every server the policy adds
// for a cluster: "grove-", the cluster id's first 8 characters and "-",
// then the node's id. Servers of the backend's own configuration, or of
// another cluster, are never touched.
func ServerPrefix(clusterID string) string {
	if len(clusterID) > 8 {
		clusterID = clusterID[:8]
	}
	return "grove-" + clusterID + "-"
}

type binding struct {
	rt     *Runtime
	props  Properties
	prefix string
}

func open(spec sdk.Spec, c sdk.Cluster) (*binding, error) {
	var p Properties
	if err := spec.Decode(&p); err != nil {
		return nil, fmt.Errorf("The properties of policy '%s' cannot be read: %w", spec.Name, err)
	}
	rt, err := ParseSocket(p.Socket)
	if err != nil {
		return nil, fmt.Errorf("properties.socket %w", err)
	}
	return &binding{rt: rt, props: p, prefix: ServerPrefix(c.ID)}, nil
}

// members are the backend's servers the policy added for this cluster.
func (b *binding) members(ctx context.Context) ([]decide.Member, error) {
	servers, err := b.rt.Servers(ctx, b.props.Backend)
	if err != nil {
		return nil, err
	}
	var out []decide.Member
	for _, s := range servers {
		if id, ok := strings.CutPrefix(s.Name, b.prefix); ok {
			out = append(out, decide.Member{Node: id, Address: s.Addr, Ready: s.Ready()})
		}
	}
	return out, nil
}

func (b *binding) nodes(c sdk.Cluster) []decide.Node {
	out := make([]decide.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		out[i] = decide.Node{ID: n.ID, Status: n.Status, Address: decide.Address(n.Data, b.props.Port),
			CreatedAt: n.CreatedAt, ProfileCreatedAt: n.ProfileCreatedAt, Tainted: n.Tainted}
	}
	return out
}

// Attach adds every node with an address as a server. A backend that does
// not exist or a socket that does not answer refuses the attach.
func (policy) Attach(ctx context.Context, spec sdk.Spec, c sdk.Cluster) (map[string]any, error) {
	b, err := open(spec, c)
	if err != nil {
		return nil, err
	}
	members, err := b.members(ctx)
	if err != nil {
		return nil, fmt.Errorf("The HAProxy policy cannot attach: %w", err)
	}
	plan, err := decide.Decide(decide.Request{Phase: decide.After, Action: decide.Attach, Nodes: b.nodes(c), Members: members})
	if err != nil {
		return nil, err
	}
	if failed := b.apply(ctx, plan); len(failed) > 0 {
		return nil, fmt.Errorf("The HAProxy policy cannot attach: %s", failed)
	}
	return map[string]any{"socket": b.props.Socket, "backend": b.props.Backend, "server_prefix": b.prefix}, nil
}

// Detach drains and removes every server the policy added for the
// cluster.
func (policy) Detach(ctx context.Context, spec sdk.Spec, c sdk.Cluster, _ map[string]any) error {
	b, err := open(spec, c)
	if err != nil {
		return err
	}
	members, err := b.members(ctx)
	if err != nil {
		return fmt.Errorf("The HAProxy policy cannot detach: %w", err)
	}
	plan, err := decide.Decide(decide.Request{Phase: decide.Detach, Action: decide.Detach, Members: members})
	if err != nil {
		return err
	}
	if failed := b.remove(ctx, plan.Leave); len(failed) > 0 {
		return fmt.Errorf("The HAProxy policy cannot remove its servers: %s", failed)
	}
	return nil
}

// Check drains and removes the servers of nodes about to leave (BEFORE),
// and adds, readdresses and readies those of nodes that came (AFTER). A
// runtime API that fails refuses the action with HAProxy's reason.
func (policy) Check(ctx context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	b, err := open(req.Policy, req.Cluster)
	if err != nil {
		return sdk.CheckResult{}, err
	}
	r, err := decide.FromCheck(req)
	if err != nil {
		return sdk.CheckResult{Refuse: err.Error()}, nil
	}
	r.Nodes = b.nodes(req.Cluster)
	members, err := b.members(ctx)
	if err != nil {
		return sdk.CheckResult{Refuse: fmt.Sprintf("The HAProxy policy cannot reach backend %s: %v.", b.props.Backend, err)}, nil
	}
	r.Members = members
	plan, err := decide.Decide(r)
	if err != nil {
		return sdk.CheckResult{Refuse: err.Error()}, nil
	}
	var res sdk.CheckResult
	if plan.Victims != nil {
		res.Data = map[string]any{sdk.DataDeletion: decide.VictimsData(req.Action, plan.Victims)}
	}
	if failed := b.remove(ctx, plan.Leave); len(failed) > 0 {
		return failed.Refuse(ReasonRemove, res.Data), nil
	}
	if failed := b.apply(ctx, plan); len(failed) > 0 {
		return failed.Refuse(ReasonAdd, res.Data), nil
	}
	return res, nil
}

// apply adds the joining nodes' servers, moves the readdressed ones and
// sets ready the servers of ACTIVE nodes: a server HAProxy adds starts in
// maintenance, so a node not yet healthy takes no traffic.
func (b *binding) apply(ctx context.Context, plan decide.Plan) decide.Failures {
	var failed decide.Failures
	bad := map[string]bool{}
	fail := func(id string, err error) {
		failed = append(failed, decide.Failure{Node: id, Err: err})
		bad[id] = true
	}
	for _, n := range plan.Join {
		if err := b.rt.AddServer(ctx, b.props.Backend, b.prefix+n.ID, n.Address, b.props.Weight, b.props.Check); err != nil {
			fail(n.ID, err)
		}
	}
	for _, n := range plan.Readdress {
		if err := b.rt.SetAddr(ctx, b.props.Backend, b.prefix+n.ID, n.Address); err != nil {
			fail(n.ID, err)
		}
	}
	for _, id := range plan.Ready {
		if bad[id] {
			continue
		}
		if err := b.rt.SetState(ctx, b.props.Backend, b.prefix+id, "ready"); err != nil {
			fail(id, err)
		}
	}
	return failed
}

// pollEvery is how often a drain looks at the leaving servers' sessions.
const pollEvery = 100 * time.Millisecond

// remove drains the leaving servers together, waits until their sessions
// end or drain_timeout passes, then puts them in maintenance and deletes
// them: HAProxy deletes only servers in maintenance.
func (b *binding) remove(ctx context.Context, leave []string) decide.Failures {
	if len(leave) == 0 {
		return nil
	}
	be := b.props.Backend
	var failed decide.Failures
	var draining []string
	for _, id := range leave {
		if err := b.rt.SetState(ctx, be, b.prefix+id, "drain"); err != nil {
			failed = append(failed, decide.Failure{Node: id, Err: err})
			continue
		}
		draining = append(draining, id)
	}
	deadline := time.Now().Add(time.Duration(b.props.DrainTimeout) * time.Second)
	for len(draining) > 0 {
		servers, err := b.rt.Servers(ctx, be)
		if err != nil {
			for _, id := range draining {
				failed = append(failed, decide.Failure{Node: id, Err: err})
			}
			return failed
		}
		busy := false
		for _, s := range servers {
			if id, ok := strings.CutPrefix(s.Name, b.prefix); ok && slices.Contains(draining, id) && s.Sessions > 0 {
				busy = true
			}
		}
		if !busy || !time.Now().Before(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			for _, id := range draining {
				failed = append(failed, decide.Failure{Node: id, Err: ctx.Err()})
			}
			return failed
		case <-time.After(pollEvery):
		}
	}
	for _, id := range draining {
		if err := b.rt.SetState(ctx, be, b.prefix+id, "maint"); err != nil {
			failed = append(failed, decide.Failure{Node: id, Err: err})
			continue
		}
		if err := b.rt.DelServer(ctx, be, b.prefix+id); err != nil {
			failed = append(failed, decide.Failure{Node: id, Err: err})
		}
	}
	return failed
}
