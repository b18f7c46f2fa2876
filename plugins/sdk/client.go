package sdk

import (
	"context"
	"fmt"

	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	pb "github.com/grovehq/grove/plugins/sdk/proto"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Client calls a plugin with SDK types. The host uses it behind its
// supervision, and sdktest uses it against an author's binary.
type Client struct {
	Info    pb.InfoClient
	Profile pb.ProfileClient
	Policy  pb.PolicyClient
	health  healthpb.HealthClient
	done    <-chan struct{}
	specs   *lru[specKey, *pb.Spec]
}

// specKey names a stored profile or policy. The engine never changes the
// properties of a stored spec (a changed profile is a new profile), so the
// wire form of a spec with an ID is encoded once.
type specKey struct{ id, name, typ, version string }

// NewClient wraps a gRPC connection to a plugin. done is closed when the
// plugin process exits (nil when unknown).
func NewClient(c *grpc.ClientConn, done <-chan struct{}) *Client {
	return &Client{Info: pb.NewInfoClient(c), Profile: pb.NewProfileClient(c), Policy: pb.NewPolicyClient(c), health: healthpb.NewHealthClient(c), done: done,
		specs: newLRU[specKey, *pb.Spec](256)}
}

// wire returns the wire form of a spec, encoding the properties of a stored
// spec (one with an ID) only the first time it is seen.
func (c *Client) wire(s Spec) *pb.Spec {
	if s.ID == "" || c.specs == nil {
		return SpecToProto(s)
	}
	k := specKey{s.ID, s.Name, s.Type, s.Version}
	if p, ok := c.specs.get(k); ok {
		return p
	}
	p := SpecToProto(s)
	c.specs.put(k, p)
	return p
}

// Ping asks the plugin's gRPC health service (which go-plugin serves)
// whether it is serving, within ctx's deadline.
func (c *Client) Ping(ctx context.Context) error {
	resp, err := c.health.Check(ctx, &healthpb.HealthCheckRequest{Service: goplugin.GRPCServiceName})
	if err != nil {
		return err
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return fmt.Errorf("the plugin reports %s", resp.GetStatus())
	}
	return nil
}

// Done is closed when the plugin process has exited.
func (c *Client) Done() <-chan struct{} { return c.done }

func diagsFromProto(ds []*pb.Diagnostic) schema.Diagnostics {
	var out schema.Diagnostics
	for _, d := range ds {
		out = append(out, schema.Diagnostic{Field: d.Field, Message: d.Message})
	}
	return out
}

// ValidateProfile asks the plugin to validate a profile spec.
func (c *Client) ValidateProfile(ctx context.Context, s Spec) (schema.Diagnostics, error) {
	resp, err := c.Profile.Validate(ctx, &pb.ValidateRequest{Spec: SpecToProto(s)})
	if err != nil {
		return nil, err
	}
	return diagsFromProto(resp.Diagnostics), nil
}

// ValidatePolicy asks the plugin to validate a policy spec.
func (c *Client) ValidatePolicy(ctx context.Context, s Spec) (schema.Diagnostics, error) {
	resp, err := c.Policy.Validate(ctx, &pb.ValidateRequest{Spec: SpecToProto(s)})
	if err != nil {
		return nil, err
	}
	return diagsFromProto(resp.Diagnostics), nil
}

// ProfileCall names a batch call of the profile service.
type ProfileCall string

// The batch calls of a profile driver.
const (
	CallCreate ProfileCall = "create"
	CallDelete ProfileCall = "delete"
	CallCheck  ProfileCall = "check"
)

// Batch runs create, delete or check on a batch of nodes. A failure of the
// whole call is returned as an error; per-node failures are in the results.
func (c *Client) Batch(ctx context.Context, call ProfileCall, p Spec, nodes []Node) ([]Result, error) {
	return c.BatchOf(ctx, call, p, NodeBatch{Nodes: nodes, wire: nodesToProto(nodes)})
}

// Update changes nodes from the old profile to the new one.
func (c *Client) Update(ctx context.Context, old, new Spec, nodes []Node) ([]Result, error) {
	resp, err := c.Profile.Update(ctx, &pb.UpdateRequest{OldProfile: c.wire(old), NewProfile: c.wire(new), Nodes: nodesToProto(nodes)})
	return batchResult(resp, err)
}

// Recover recovers nodes with the given operation.
func (c *Client) Recover(ctx context.Context, p Spec, nodes []Node, op string, params map[string]any) ([]Result, error) {
	resp, err := c.Profile.Recover(ctx, &pb.RecoverRequest{Profile: c.wire(p), Nodes: nodesToProto(nodes), Operation: op, ParamsJson: encodeJSON(params)})
	return batchResult(resp, err)
}

// Operate runs a node operation on nodes. The plugin must have agreed on
// profile API 2 (ProfileAPIOperate); an older one answers Unimplemented.
func (c *Client) Operate(ctx context.Context, p Spec, nodes []Node, op string, params map[string]any) ([]Result, error) {
	resp, err := c.Profile.Operate(ctx, &pb.OperateRequest{Profile: c.wire(p), Nodes: nodesToProto(nodes), Operation: op, ParamsJson: encodeJSON(params)})
	return batchResult(resp, err)
}

// Adopt asks the driver of req.Type to describe an existing resource. The
// plugin must have agreed on profile API 3 (ProfileAPIAdopt); an older one,
// or a driver without the Adopter hook, answers Unimplemented.
func (c *Client) Adopt(ctx context.Context, req AdoptRequest) (Adoption, error) {
	preq := &pb.AdoptRequest{Type: req.Type, Version: req.Version, Identity: req.Identity, Preview: req.Preview, Snapshot: req.Snapshot}
	if !req.Preview {
		preq.Node = NodeToProto(req.Node)
	}
	resp, err := c.Profile.Adopt(ctx, preq)
	if err != nil {
		return Adoption{}, err
	}
	if resp.Error != nil {
		return Adoption{}, ErrorFromProto(resp.Error)
	}
	a := Adoption{Properties: decodeMap(resp.PropertiesJson)}
	if resp.Result != nil {
		a.Result = resultsFromProto([]*pb.NodeResult{resp.Result})[0]
	}
	return a, nil
}

func batchResult(resp *pb.BatchResponse, err error) ([]Result, error) {
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, ErrorFromProto(resp.Error)
	}
	return resultsFromProto(resp.Results), nil
}

// Attach asks a policy for its binding data.
func (c *Client) Attach(ctx context.Context, p Spec, cl Cluster) (map[string]any, error) {
	resp, err := c.Policy.Attach(ctx, &pb.AttachRequest{Policy: c.wire(p), Cluster: ClusterToProto(cl)})
	if err != nil {
		return nil, err
	}
	if resp.Error != nil {
		return nil, ErrorFromProto(resp.Error)
	}
	return decodeMap(resp.BindingDataJson), nil
}

// Detach tells a policy it is being detached.
func (c *Client) Detach(ctx context.Context, p Spec, cl Cluster, data map[string]any) error {
	resp, err := c.Policy.Detach(ctx, &pb.AttachRequest{Policy: c.wire(p), Cluster: ClusterToProto(cl), BindingDataJson: encodeJSON(data)})
	if err != nil {
		return err
	}
	return ErrorFromProto(resp.Error)
}

// Check runs a policy check.
func (c *Client) Check(ctx context.Context, req CheckRequest) (CheckResult, error) {
	resp, err := c.Policy.Check(ctx, &pb.CheckRequest{
		Policy: c.wire(req.Policy), Phase: req.Phase,
		Action: &pb.ActionSnapshot{Id: req.Action.ID, Action: req.Action.Name, Target: req.Action.Target,
			InputsJson: encodeJSON(req.Action.Inputs), DataJson: encodeJSON(req.Action.Data)},
		Cluster: ClusterToProto(req.Cluster), BindingDataJson: encodeJSON(req.BindingData), LastOp: req.LastOp, Now: req.Now,
		Hosts: HostSnapshotToProto(req.Hosts),
	})
	if err != nil {
		return CheckResult{}, err
	}
	if resp.Error != nil {
		return CheckResult{}, ErrorFromProto(resp.Error)
	}
	if resp.Status == "ERROR" {
		return CheckResult{Refuse: validUTF8(resp.Reason), Data: decodeMap(resp.ActionDataJson)}, nil
	}
	return CheckResult{Data: checkResultFromProto(resp)}, nil
}

// Watch streams a profile type's node events to fn until ctx ends or the
// stream breaks. It returns a gRPC Unimplemented error for drivers that do
// not stream.
func (c *Client) Watch(ctx context.Context, typ string, fn func(NodeEvent)) error {
	stream, err := c.Profile.Watch(ctx, &pb.WatchRequest{Type: typ})
	if err != nil {
		return err
	}
	for {
		ev, err := stream.Recv()
		if err != nil {
			return err
		}
		fn(NodeEvent{NodeID: ev.NodeId, Healthy: ev.Healthy, Reason: ev.Reason, Completed: ev.Completed})
	}
}

// Hosts lists the hosts of a profile type's driver. It returns a gRPC
// Unimplemented error for drivers without hosts.
func (c *Client) Hosts(ctx context.Context, typ string) ([]Host, error) {
	resp, err := c.Profile.Hosts(ctx, &pb.HostsRequest{Type: typ})
	if err != nil {
		return nil, err
	}
	out := make([]Host, 0, len(resp.Hosts))
	for _, h := range resp.Hosts {
		out = append(out, Host{Name: h.Name, Attributes: h.Attributes, Load: h.Load, Err: h.Error})
	}
	return out, nil
}
