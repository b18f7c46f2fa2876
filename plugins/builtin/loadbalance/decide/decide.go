// Package decide holds the load-balancing policies' decisions as pure
// functions of what a policy read: which nodes join a load balancer and
// which leave it for each action the policies target (Senlin's
// senlin.policy.loadbalance targets, which grove.policy.haproxy shares),
// and where a node serves. The policies (plugins/builtin/loadbalance for
// Octavia, plugins/builtin/haproxy for HAProxy) do the I/O around them.
package decide

import (
	"fmt"
	"net"
	"slices"
	"strconv"
	"strings"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/scaling"
)

// The actions the policies act on, and the phases.
const (
	Before = "BEFORE"
	After  = "AFTER"

	ClusterAddNodes     = "CLUSTER_ADD_NODES"
	ClusterDelNodes     = "CLUSTER_DEL_NODES"
	ClusterScaleOut     = "CLUSTER_SCALE_OUT"
	ClusterScaleIn      = "CLUSTER_SCALE_IN"
	ClusterResize       = "CLUSTER_RESIZE"
	ClusterReplaceNodes = "CLUSTER_REPLACE_NODES"
	NodeCreate          = "NODE_CREATE"
	NodeDelete          = "NODE_DELETE"
	NodeRecover         = "NODE_RECOVER"

	// Attach and Detach are the binding's own moments, not actions the
	// engine checks: every node joins, every member the policy added
	// leaves.
	Attach = "ATTACH"
	Detach = "DETACH"
)

// Targets are Senlin's targets of senlin.policy.loadbalance: members are
// added after the actions that add or bring back nodes and removed before
// the actions that take nodes away.
var Targets = [][2]string{
	{After, ClusterAddNodes}, {After, ClusterScaleOut}, {After, ClusterResize}, {After, NodeRecover},
	{After, NodeCreate}, {After, ClusterReplaceNodes},
	{Before, ClusterDelNodes}, {Before, ClusterScaleIn}, {Before, ClusterResize}, {Before, NodeDelete},
	{Before, ClusterReplaceNodes},
}

// MaxNodes bounds a resize parsed inside a policy; the engine has enforced
// its own limit before the check runs.
const MaxNodes = 1 << 30

// Node is a cluster node as a policy sees it.
type Node struct {
	ID     string
	Status string
	// Address is where the node serves, host:port; empty when the node
	// has none yet (it cannot join until it has).
	Address string
	// CreatedAt and ProfileCreatedAt order victims when the policy must
	// choose them (Unix microseconds).
	CreatedAt, ProfileCreatedAt int64
	Tainted                     bool
}

// Member is a node's membership of the load balancer as the policy found
// it.
type Member struct {
	Node    string
	Address string
	// Ready says the member takes traffic (HAProxy: not in maintenance);
	// Octavia members are always ready.
	Ready bool
}

// Request is what a decision is made from.
type Request struct {
	Phase  string
	Action string
	// Target is the node of a NODE_* action.
	Target string
	// Nodes are the cluster's nodes now; Members the load balancer's
	// members that the policy added.
	Nodes   []Node
	Members []Member
	// Deletion is data.deletion.candidates, the victims a policy checked
	// earlier (the deletion policy) chose; nil when none did.
	Deletion []string
	// DeletionCount is data.deletion.count when an earlier policy decided
	// only a count.
	DeletionCount *int
	// DelNodes are CLUSTER_DEL_NODES's candidates, AddNodes
	// CLUSTER_ADD_NODES's nodes, Replace CLUSTER_REPLACE_NODES's
	// original→replacement pairs.
	DelNodes []string
	AddNodes []string
	Replace  map[string]string
	// ScaleCount is a scale-in's count input (nil: one); Resize, Bounds a
	// resize's request and what it applies to.
	ScaleCount *int
	Resize     scaling.Resize
	Bounds     scaling.Bounds
	// Recreated says a NODE_RECOVER recreated its node (RECREATE, the
	// default operation): the node's old member is replaced even when the
	// address is the same, as Senlin does.
	Recreated bool
	// Shuffle picks victims when no policy before chose them: Senlin picks
	// random ones. Nil picks at random; tests pass a fixed order.
	Shuffle func(ids []string) []string
}

// Plan is what the policy does to the load balancer.
type Plan struct {
	// Leave are the nodes whose members are removed (drained first).
	Leave []string
	// Join are the nodes added as members.
	Join []Node
	// Readdress are members whose node now serves elsewhere (a recreated
	// node): HAProxy changes the server's address, Octavia removes the
	// old member first and adds the new one.
	Readdress []Node
	// Ready are members (joined now or before) whose nodes are ACTIVE
	// and that do not take traffic yet: set ready.
	Ready []string
	// Victims, when not nil, are the nodes the policy chose to leave
	// because no policy before it did: they go to data.deletion so the
	// engine deletes the same nodes.
	Victims []string
	// Skipped lists nodes that should join but have no address yet.
	Skipped []string
}

// Active is the node status a driver reports for a healthy node.
const Active = "ACTIVE"

// Decide is the plan for one action and phase.
func Decide(r Request) (Plan, error) {
	members := map[string]Member{}
	for _, m := range r.Members {
		members[m.Node] = m
	}
	nodes := map[string]Node{}
	for _, n := range r.Nodes {
		nodes[n.ID] = n
	}
	var p Plan
	switch r.Phase {
	case Before:
		leave, victims, err := leaving(r, nodes)
		if err != nil {
			return Plan{}, err
		}
		p.Victims = victims
		for _, id := range leave {
			if _, ok := members[id]; ok {
				p.Leave = append(p.Leave, id)
			}
		}
		return p, nil
	case After:
		var ids []string
		switch r.Action {
		case NodeCreate, NodeRecover:
			ids = []string{r.Target}
		case ClusterReplaceNodes:
			for _, orig := range sortedKeys(r.Replace) {
				ids = append(ids, r.Replace[orig])
			}
		case ClusterAddNodes:
			ids = r.AddNodes
		case ClusterScaleOut, ClusterResize, Attach:
			// Senlin reads data.creation.nodes; Grove's engine does not
			// record them, and the nodes that are not members are
			// exactly those the action created.
			for _, n := range r.Nodes {
				ids = append(ids, n.ID)
			}
		default:
			return Plan{}, fmt.Errorf("The load-balancing policy does not act after %s.", r.Action)
		}
		for _, id := range ids {
			n, ok := nodes[id]
			if !ok {
				continue
			}
			m, member := members[id]
			switch {
			case n.Address == "":
				p.Skipped = append(p.Skipped, id)
				continue
			case !member:
				p.Join = append(p.Join, n)
			case m.Address != n.Address || (r.Action == NodeRecover && r.Recreated):
				p.Readdress = append(p.Readdress, n)
			}
			if n.Status == Active && (!member || !m.Ready) {
				p.Ready = append(p.Ready, id)
			}
		}
		return p, nil
	case Detach:
		for _, m := range r.Members {
			p.Leave = append(p.Leave, m.Node)
		}
		return p, nil
	}
	return Plan{}, fmt.Errorf("The load-balancing policy does not act in phase %q.", r.Phase)
}

// leaving is who leaves before an action, and the victims the policy chose
// itself when no policy before it did.
func leaving(r Request, nodes map[string]Node) (leave, victims []string, err error) {
	switch r.Action {
	case NodeDelete:
		return []string{r.Target}, nil, nil
	case ClusterReplaceNodes:
		return sortedKeys(r.Replace), nil, nil
	case ClusterDelNodes:
		if len(r.Deletion) > 0 {
			return r.Deletion, nil, nil
		}
		return r.DelNodes, nil, nil
	case ClusterScaleIn, ClusterResize:
	default:
		return nil, nil, fmt.Errorf("The load-balancing policy does not act before %s.", r.Action)
	}
	if len(r.Deletion) > 0 {
		return r.Deletion, nil, nil
	}
	count := 1
	switch {
	case r.DeletionCount != nil:
		count = *r.DeletionCount
	case r.Action == ClusterResize:
		res, err := scaling.ParseResize(r.Bounds, len(r.Nodes), r.Resize, MaxNodes)
		if err != nil {
			return nil, nil, err
		}
		count = res.Delete
	case r.ScaleCount != nil:
		count = *r.ScaleCount
	}
	if count <= 0 {
		return nil, nil, nil
	}
	cands := make([]scaling.Candidate, 0, len(r.Nodes))
	for _, n := range r.Nodes {
		cands = append(cands, scaling.Candidate{ID: n.ID, Status: n.Status, Tainted: n.Tainted, CreatedAt: n.CreatedAt, ProfileCreatedAt: n.ProfileCreatedAt})
	}
	criterion := scaling.Random
	if r.Shuffle != nil {
		// A fixed order stands in for the random one: sort the
		// candidates as Shuffle says and take the oldest-first picks
		// in that order.
		order := r.Shuffle(ids(cands))
		pos := map[string]int{}
		for i, id := range order {
			pos[id] = i
		}
		for i := range cands {
			cands[i].CreatedAt = int64(pos[cands[i].ID]) + 1
		}
		criterion = scaling.OldestFirst
	}
	v := scaling.SelectVictims(cands, count, criterion, nil)
	return v, v, nil
}

func ids(c []scaling.Candidate) []string {
	out := make([]string, len(c))
	for i, n := range c {
		out[i] = n.ID
	}
	return out
}

func sortedKeys(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// Address is where a node serves, from its data, by the convention the
// built-in drivers follow: data.address is "host:port" (local.process and
// container.docker with a port), or a bare host (Nova servers, vSphere
// VMs: their first IP address) served on data.port when the node has one,
// else on defaultPort, the policy's port. Empty when the node has no
// address yet or no port is known.
func Address(data map[string]any, defaultPort int) string {
	a, _ := data["address"].(string)
	if a == "" {
		return ""
	}
	if _, _, err := net.SplitHostPort(a); err == nil {
		return a
	}
	port := defaultPort
	switch v := data["port"].(type) {
	case float64:
		port = int(v)
	case int:
		port = v
	case int64:
		port = int(v)
	}
	if port <= 0 {
		return ""
	}
	return net.JoinHostPort(a, strconv.Itoa(port))
}

// FromCheck reads what a decision needs from a policy's check request,
// except the nodes and members the policy reads itself.
func FromCheck(req sdk.CheckRequest) (Request, error) {
	r := Request{Phase: req.Phase, Action: req.Action.Name, Target: req.Action.Target}
	var del sdk.DeletionData
	if _, err := req.Action.DecodeData(sdk.DataDeletion, &del); err != nil {
		return r, fmt.Errorf("The deletion decided by an earlier policy cannot be read: %w.", err)
	}
	r.Deletion, r.DeletionCount = del.Candidates, del.Count
	var err error
	switch req.Action.Name {
	case ClusterDelNodes:
		var in sdk.ClusterDelNodesInputs
		err = req.Action.DecodeInputs(&in)
		r.DelNodes = in.Candidates
	case ClusterAddNodes:
		var in sdk.ClusterAddNodesInputs
		err = req.Action.DecodeInputs(&in)
		r.AddNodes = in.Nodes
	case ClusterReplaceNodes:
		var in struct {
			Candidates map[string]string `json:"candidates"`
		}
		err = req.Action.DecodeInputs(&in)
		r.Replace = in.Candidates
	case ClusterScaleIn:
		var in sdk.ClusterScaleInputs
		err = req.Action.DecodeInputs(&in)
		r.ScaleCount = in.Count
	case NodeRecover:
		var in struct {
			Operation string `json:"operation"`
		}
		err = req.Action.DecodeInputs(&in)
		r.Recreated = in.Operation == "" || strings.EqualFold(in.Operation, "RECREATE")
	case ClusterResize:
		var in sdk.ClusterResizeInputs
		err = req.Action.DecodeInputs(&in)
		r.Resize = in.Resize()
		c := req.Cluster
		r.Bounds.Desired, r.Bounds.Min, r.Bounds.Max = c.DesiredCapacity, c.MinSize, c.MaxSize
	}
	if err != nil {
		return r, fmt.Errorf("The inputs of action %s cannot be read: %w.", req.Action.Name, err)
	}
	return r, nil
}

// VictimsData is data.deletion with the victims a load-balancing policy
// chose when no policy before it did, so the engine deletes the nodes
// whose members were removed.
func VictimsData(a sdk.Action, victims []string) map[string]any {
	out := map[string]any{}
	if prev, ok := a.Data[sdk.DataDeletion].(map[string]any); ok {
		for k, v := range prev {
			out[k] = v
		}
	}
	out["candidates"] = victims
	out["count"] = len(victims)
	return out
}

// Failure is a node whose member could not be added or removed, and why.
type Failure struct {
	Node string
	Err  error
}

// Failures are the nodes a load-balancing policy could not change.
type Failures []Failure

func (f Failures) String() string {
	parts := make([]string, len(f))
	for i, x := range f {
		parts[i] = fmt.Sprintf("Node %s: %v.", x.Node, x.Err)
	}
	return strings.Join(parts, " ")
}

// Refuse fails the action with Senlin's reason followed by each node's
// error, and marks the nodes WARNING with the reason
// (sdk.DataNodeWarnings), keeping the data decided before (the victims) so
// the failed action says what was chosen.
func (f Failures) Refuse(reason string, data map[string]any) sdk.CheckResult {
	out := map[string]any{}
	for k, v := range data {
		out[k] = v
	}
	warn := map[string]any{}
	for _, x := range f {
		warn[x.Node] = reason
	}
	out[sdk.DataNodeWarnings] = warn
	return sdk.CheckResult{Refuse: reason + " " + f.String(), Data: out}
}
