package sdk

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	pb "github.com/grovehq/grove/plugins/sdk/proto"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Versions. The three axes are kept apart on purpose (see docs/plugins.md):
// go-plugin's core protocol is go-plugin's business; HandshakeVersion changes
// only when the transport or envelope breaks; the API versions change when a
// kind's calls change meaning.
const (
	// HandshakeVersion is Grove's go-plugin application protocol version.
	HandshakeVersion = 1
	// MagicCookieKey and MagicCookieValue keep a plugin binary from being run
	// by hand by mistake; they are not a security measure.
	MagicCookieKey   = "GROVE_PLUGIN_MAGIC_COOKIE"
	MagicCookieValue = "d3b1c2f0-grove-plugin-7a6e"
	// PluginName is the go-plugin dispense name of Grove's gRPC plugin.
	PluginName = "grove"
)

// ProfileAPIVersions returns the profile API versions this SDK speaks,
// newest last. Profile API 2 adds node operations (Profile.Operate); a host
// that agreed on 1 with a plugin refuses operations on its types. Profile
// API 3 adds node adoption (Profile.Adopt); a host that agreed on less
// refuses adoption of its types.
func ProfileAPIVersions() []string { return []string{"1", "2", "3"} }

// ProfileAPIOperate is the profile API version from which a plugin serves
// node operations.
const ProfileAPIOperate = "2"

// ProfileAPIAdopt is the profile API version from which a plugin serves
// node adoption.
const ProfileAPIAdopt = "3"

// PolicyAPIVersions returns the policy API versions this SDK speaks, newest
// last. Policy API 2 passes data.deletion and data.creation as typed
// messages; a host or plugin that speaks only 1 gets them as JSON, so either
// side may be the older one.
func PolicyAPIVersions() []string { return []string{"1", "2"} }

// ClientConfig is go-plugin's configuration for starting the Grove plugin
// binary cmd and talking to it; the host and sdktest add their logging.
func ClientConfig(cmd *exec.Cmd, logger hclog.Logger) *goplugin.ClientConfig {
	return &goplugin.ClientConfig{
		HandshakeConfig:  Handshake(),
		Plugins:          goplugin.PluginSet{PluginName: &GRPCPlugin{}},
		Cmd:              cmd,
		AllowedProtocols: []goplugin.Protocol{goplugin.ProtocolGRPC},
		GRPCDialOptions:  dialOptions(),
		Logger:           logger,
		StartTimeout:     20 * time.Second,
	}
}

// Handshake is the go-plugin handshake shared by host and plugins.
func Handshake() goplugin.HandshakeConfig {
	return goplugin.HandshakeConfig{ProtocolVersion: HandshakeVersion, MagicCookieKey: MagicCookieKey, MagicCookieValue: MagicCookieValue}
}

// Plugin describes a plugin binary: its name, version and components.
type Plugin struct {
	Name     string
	Version  string
	Profiles []ProfileType
	Policies []PolicyType
	// Logger receives the plugin's logs; the host shows them under the
	// plugin's name. Defaults to JSON on stderr, which go-plugin forwards.
	Logger hclog.Logger
	// ProfileAPIVersions and PolicyAPIVersions are the API versions this
	// plugin speaks per component kind; empty means this SDK's.
	ProfileAPIVersions []string
	PolicyAPIVersions  []string
}

func (p *Plugin) profileAPIs() []string {
	if len(p.ProfileAPIVersions) > 0 {
		return p.ProfileAPIVersions
	}
	return ProfileAPIVersions()
}

func (p *Plugin) policyAPIs() []string {
	if len(p.PolicyAPIVersions) > 0 {
		return p.PolicyAPIVersions
	}
	return PolicyAPIVersions()
}

// Describe returns the description the host uses for discovery.
func (p *Plugin) Describe() *pb.Description {
	d := &pb.Description{Name: p.Name, Version: p.Version, HandshakeVersion: HandshakeVersion}
	for _, pt := range p.Profiles {
		d.Components = append(d.Components, &pb.Component{Kind: pb.Kind_KIND_PROFILE, Type: pt.Type, Versions: pt.Versions,
			ApiVersions: p.profileAPIs(), Description: pt.Description, SchemaJson: encodeJSON(pt.Schema), Operations: pt.Operations, NeedsPort: pt.NeedsPort,
			NodeOperations: nodeOperationsToProto(pt.NodeOperations)})
	}
	for _, pt := range p.Policies {
		c := &pb.Component{Kind: pb.Kind_KIND_POLICY, Type: pt.Type, Versions: pt.Versions, ApiVersions: p.policyAPIs(),
			Description: pt.Description, SchemaJson: encodeJSON(pt.Schema), DefaultPriority: int32(pt.Priority), Singleton: pt.Singleton, WantsHosts: pt.WantsHosts}
		for _, t := range pt.Targets {
			c.Targets = append(c.Targets, &pb.Target{Phase: t.Phase, Action: t.Action})
		}
		d.Components = append(d.Components, c)
	}
	return d
}

// DescriptionJSON is the JSON form printed by the `describe` sub-command.
type DescriptionJSON struct {
	Name             string          `json:"name"`
	Version          string          `json:"version"`
	HandshakeVersion int             `json:"handshake_version"`
	Components       []ComponentJSON `json:"components"`
}

// ComponentJSON is one component in DescriptionJSON.
type ComponentJSON struct {
	Kind            string        `json:"kind"`
	Type            string        `json:"type"`
	Versions        []string      `json:"versions"`
	APIVersions     []string      `json:"api_versions"`
	Description     string        `json:"description"`
	Schema          schema.Schema `json:"schema"`
	Targets         []Target      `json:"targets,omitempty"`
	DefaultPriority int           `json:"default_priority,omitempty"`
	Singleton       bool          `json:"singleton,omitempty"`
	WantsHosts      bool          `json:"wants_hosts,omitempty"`
	Operations      []string      `json:"operations,omitempty"`
	NeedsPort       bool          `json:"needs_port,omitempty"`
	// NodeOperations are a profile type's node operations.
	NodeOperations []NodeOperation `json:"node_operations,omitempty"`
}

// DescriptionToJSON converts a wire description to its JSON form.
func DescriptionToJSON(d *pb.Description) (DescriptionJSON, error) {
	out := DescriptionJSON{Name: d.Name, Version: d.Version, HandshakeVersion: int(d.HandshakeVersion)}
	for _, c := range d.Components {
		cj := ComponentJSON{Type: c.Type, Versions: c.Versions, APIVersions: c.ApiVersions, Description: c.Description,
			DefaultPriority: int(c.DefaultPriority), Singleton: c.Singleton, WantsHosts: c.WantsHosts, Operations: c.Operations, NeedsPort: c.NeedsPort}
		switch c.Kind {
		case pb.Kind_KIND_PROFILE:
			cj.Kind = "profile"
		case pb.Kind_KIND_POLICY:
			cj.Kind = "policy"
		default:
			return out, fmt.Errorf("component %s has an unknown kind %d", c.Type, c.Kind)
		}
		ops, err := nodeOperationsFromProto(c.NodeOperations)
		if err != nil {
			return out, fmt.Errorf("component %s: %w", c.Type, err)
		}
		cj.NodeOperations = ops
		if len(c.SchemaJson) > 0 {
			if err := json.Unmarshal(c.SchemaJson, &cj.Schema); err != nil {
				return out, fmt.Errorf("component %s: schema is not valid JSON: %w", c.Type, err)
			}
		}
		for _, t := range c.Targets {
			cj.Targets = append(cj.Targets, Target{Phase: t.Phase, Action: t.Action})
		}
		out.Components = append(out.Components, cj)
	}
	return out, nil
}

// Main is the entry point of a plugin binary: `describe` prints the JSON
// description and exits; anything else serves over go-plugin. Call it from main.
func Main(p *Plugin) {
	if len(os.Args) > 1 && os.Args[1] == "describe" {
		if err := WriteDescription(os.Stdout, p); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	Serve(p)
}

// WriteDescription writes the JSON description of p to w.
func WriteDescription(w io.Writer, p *Plugin) error {
	d, err := DescriptionToJSON(p.Describe())
	if err != nil {
		return err
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(d)
}

// Serve serves p over go-plugin until the host closes the connection. When the
// process that started the plugin goes away, the plugin exits too, so an agent
// killed with SIGKILL leaves no plugin behind.
func Serve(p *Plugin) {
	logger := p.Logger
	if logger == nil {
		logger = hclog.New(&hclog.LoggerOptions{Name: p.Name, Level: hclog.LevelFromString(os.Getenv("GROVE_PLUGIN_LOG_LEVEL")), JSONFormat: true, Output: os.Stderr})
	}
	go exitWithParent(os.Getppid())
	goplugin.Serve(&goplugin.ServeConfig{
		HandshakeConfig: Handshake(),
		Plugins:         goplugin.PluginSet{PluginName: &GRPCPlugin{Impl: p}},
		GRPCServer: func(opts []grpc.ServerOption) *grpc.Server {
			return grpc.NewServer(append(opts, serverOptions()...)...)
		},
		Logger: logger,
	})
}

// exitWithParent watches for re-parenting: go-plugin has no parent-death
// signal, and an orphaned plugin would otherwise live on forever.
func exitWithParent(parent int) {
	if parent <= 1 {
		return
	}
	for range time.Tick(500 * time.Millisecond) {
		if os.Getppid() != parent {
			os.Exit(0)
		}
	}
}

// GRPCPlugin is the go-plugin glue, used by Serve and by the host.
type GRPCPlugin struct {
	goplugin.NetRPCUnsupportedPlugin
	// Impl is set on the plugin side only.
	Impl *Plugin
}

// GRPCServer registers Grove's services on the plugin's gRPC server.
func (g *GRPCPlugin) GRPCServer(_ *goplugin.GRPCBroker, s *grpc.Server) error {
	srv := newServer(g.Impl)
	pb.RegisterInfoServer(s, srv)
	pb.RegisterProfileServer(s, &profileServer{server: srv})
	pb.RegisterPolicyServer(s, &policyServer{server: srv})
	return nil
}

// GRPCClient returns a *Client on the host side.
func (g *GRPCPlugin) GRPCClient(ctx context.Context, _ *goplugin.GRPCBroker, c *grpc.ClientConn) (any, error) {
	return NewClient(c, ctx.Done()), nil
}

type server struct {
	pb.UnimplementedInfoServer
	plugin   *Plugin
	profiles map[string]*ProfileType
	policies map[string]*PolicyType
	specs    *specCache
	// typedDecisions is set once the host has agreed on a policy API that
	// takes deletion and creation decisions typed.
	typedDecisions atomic.Bool
}

func newServer(p *Plugin) *server {
	s := &server{plugin: p, profiles: map[string]*ProfileType{}, policies: map[string]*PolicyType{}, specs: newSpecCache(256)}
	for i := range p.Profiles {
		s.profiles[p.Profiles[i].Type] = &p.Profiles[i]
	}
	for i := range p.Policies {
		s.policies[p.Policies[i].Type] = &p.Policies[i]
	}
	return s
}

func (s *server) Describe(context.Context, *pb.DescribeRequest) (*pb.Description, error) {
	return s.plugin.Describe(), nil
}

func (s *server) Configure(_ context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	resp := &pb.ConfigureResponse{}
	if len(s.plugin.Profiles) > 0 {
		v, err := Negotiate("profile", req.ProfileApiVersions, s.plugin.profileAPIs())
		if err != nil {
			return nil, err
		}
		resp.ProfileApiVersion = v
	}
	if len(s.plugin.Policies) > 0 {
		v, err := Negotiate("policy", req.PolicyApiVersions, s.plugin.policyAPIs())
		if err != nil {
			return nil, err
		}
		resp.PolicyApiVersion = v
		s.typedDecisions.Store(apiAtLeast(v, policyAPITyped))
	}
	return resp, nil
}

// Negotiate picks the highest API version both sides speak, or explains why
// there is none, naming both lists.
func Negotiate(kind string, host, plugin []string) (string, error) {
	var common []string
	for _, v := range plugin {
		if slices.Contains(host, v) {
			common = append(common, v)
		}
	}
	if len(common) == 0 {
		return "", fmt.Errorf("no common %s API version: the host speaks %v, the plugin speaks %v", kind, host, plugin)
	}
	sort.Slice(common, func(i, j int) bool {
		if len(common[i]) != len(common[j]) {
			return len(common[i]) < len(common[j])
		}
		return common[i] < common[j]
	})
	return common[len(common)-1], nil
}

func (s *server) profile(spec *pb.Spec) (*ProfileType, Spec, error) {
	pt, ok := s.profiles[spec.GetType()]
	if !ok {
		return nil, Spec{}, fmt.Errorf("this plugin does not serve profile type %q", spec.GetType())
	}
	sp, err := s.specs.get(spec, pt.Schema)
	return pt, sp, err
}

func (s *server) policy(spec *pb.Spec) (*PolicyType, Spec, error) {
	pt, ok := s.policies[spec.GetType()]
	if !ok {
		return nil, Spec{}, fmt.Errorf("this plugin does not serve policy type %q", spec.GetType())
	}
	sp, err := s.specs.get(spec, pt.Schema)
	return pt, sp, err
}

func validateSpec(ctx context.Context, sc schema.Schema, versions []string, extra func(context.Context, Spec) schema.Diagnostics, spec *pb.Spec) *pb.ValidateResponse {
	var diags schema.Diagnostics
	if !slices.Contains(versions, spec.GetVersion()) {
		diags = append(diags, schema.Diagnostic{Field: "version", Message: fmt.Sprintf("version %q of type %s is not supported; supported versions are %v.", spec.GetVersion(), spec.GetType(), versions)})
	}
	sp := SpecFromProto(spec)
	props, ds := sc.Validate("properties", sp.Properties)
	diags = append(diags, ds...)
	if len(diags) == 0 && extra != nil {
		sp.Properties = props
		diags = append(diags, extra(ctx, sp)...)
	}
	resp := &pb.ValidateResponse{}
	for _, d := range diags {
		resp.Diagnostics = append(resp.Diagnostics, &pb.Diagnostic{Field: d.Field, Message: d.Message})
	}
	return resp
}

type profileServer struct {
	pb.UnimplementedProfileServer
	*server
}

func (s *profileServer) Validate(ctx context.Context, req *pb.ValidateRequest) (*pb.ValidateResponse, error) {
	pt, ok := s.profiles[req.GetSpec().GetType()]
	if !ok {
		return nil, fmt.Errorf("this plugin does not serve profile type %q", req.GetSpec().GetType())
	}
	return validateSpec(ctx, pt.Schema, pt.Versions, pt.Validate, req.Spec), nil
}

func (s *profileServer) batch(ctx context.Context, spec *pb.Spec, nodes []*pb.Node, call func(context.Context, *ProfileType, Spec, []Node) []Result) (resp *pb.BatchResponse, _ error) {
	pt, sp, err := s.profile(spec)
	if err != nil {
		return &pb.BatchResponse{Error: ErrorToProto(err)}, nil
	}
	defer s.recoverCall(ctx, "profile type "+pt.Type, func(err error) { resp = &pb.BatchResponse{Error: ErrorToProto(err)} })
	return &pb.BatchResponse{Results: resultsToProto(call(ctx, pt, sp, nodesFromProto(nodes)))}, nil
}

func (s *profileServer) Create(ctx context.Context, req *pb.BatchRequest) (*pb.BatchResponse, error) {
	return s.batch(ctx, req.Profile, req.Nodes, func(ctx context.Context, pt *ProfileType, sp Spec, n []Node) []Result {
		return pt.Driver.Create(ctx, sp, n)
	})
}

func (s *profileServer) Delete(ctx context.Context, req *pb.BatchRequest) (*pb.BatchResponse, error) {
	return s.batch(ctx, req.Profile, req.Nodes, func(ctx context.Context, pt *ProfileType, sp Spec, n []Node) []Result {
		return pt.Driver.Delete(ctx, sp, n)
	})
}

func (s *profileServer) Check(ctx context.Context, req *pb.BatchRequest) (*pb.BatchResponse, error) {
	return s.batch(ctx, req.Profile, req.Nodes, func(ctx context.Context, pt *ProfileType, sp Spec, n []Node) []Result {
		return pt.Driver.Check(ctx, sp, n)
	})
}

func (s *profileServer) Update(ctx context.Context, req *pb.UpdateRequest) (*pb.BatchResponse, error) {
	_, oldSpec, err := s.profile(req.OldProfile)
	if err != nil {
		return &pb.BatchResponse{Error: ErrorToProto(err)}, nil
	}
	return s.batch(ctx, req.NewProfile, req.Nodes, func(ctx context.Context, pt *ProfileType, sp Spec, n []Node) []Result {
		return pt.Driver.Update(ctx, oldSpec, sp, n)
	})
}

func (s *profileServer) Recover(ctx context.Context, req *pb.RecoverRequest) (*pb.BatchResponse, error) {
	return s.batch(ctx, req.Profile, req.Nodes, func(ctx context.Context, pt *ProfileType, sp Spec, n []Node) []Result {
		return pt.Driver.Recover(ctx, sp, n, req.Operation, decodeMap(req.ParamsJson))
	})
}

func (s *profileServer) Details(ctx context.Context, req *pb.BatchRequest) (*pb.DetailsResponse, error) {
	return &pb.DetailsResponse{}, nil
}

func (s *profileServer) Watch(req *pb.WatchRequest, stream pb.Profile_WatchServer) error {
	pt, ok := s.profiles[req.GetType()]
	if !ok {
		return status.Errorf(codes.NotFound, "this plugin does not serve profile type %q", req.GetType())
	}
	if pt.Watch == nil {
		return status.Errorf(codes.Unimplemented, "profile type %s does not stream node events", pt.Type)
	}
	var mu sync.Mutex
	return pt.Watch(stream.Context(), func(ev NodeEvent) {
		mu.Lock()
		defer mu.Unlock()
		_ = stream.Send(&pb.NodeEvent{NodeId: ev.NodeID, Healthy: ev.Healthy, Reason: ev.Reason, Completed: ev.Completed})
	})
}

func (s *profileServer) Hosts(ctx context.Context, req *pb.HostsRequest) (*pb.HostsResponse, error) {
	pt, ok := s.profiles[req.GetType()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "this plugin does not serve profile type %q", req.GetType())
	}
	if pt.Hosts == nil {
		return nil, status.Errorf(codes.Unimplemented, "profile type %s has no hosts to list", pt.Type)
	}
	hosts, err := pt.Hosts(ctx)
	if err != nil {
		return nil, status.Errorf(codes.Unavailable, "list the hosts of %s: %v", pt.Type, err)
	}
	out := &pb.HostsResponse{}
	for _, h := range hosts {
		out.Hosts = append(out.Hosts, &pb.Host{Name: h.Name, Attributes: h.Attributes, Load: h.Load, Error: h.Err})
	}
	return out, nil
}

func (s *profileServer) Operate(ctx context.Context, req *pb.OperateRequest) (*pb.BatchResponse, error) {
	return s.batch(ctx, req.Profile, req.Nodes, func(ctx context.Context, pt *ProfileType, sp Spec, n []Node) []Result {
		op, ok := FindNodeOperation(pt.NodeOperations, req.Operation)
		operator, can := pt.Driver.(Operator)
		if !ok || !can {
			return failNodes(n, fmt.Errorf("profile type %s has no node operation %q", pt.Type, req.Operation))
		}
		params, diags := op.Parameters.Validate("params", decodeMap(req.ParamsJson))
		if err := diags.Err(); err != nil {
			return failNodes(n, fmt.Errorf("operation %s: %w", op.Name, err))
		}
		return operator.Operate(ctx, sp, n, op.Name, params)
	})
}

func (s *profileServer) Adopt(ctx context.Context, req *pb.AdoptRequest) (*pb.AdoptResponse, error) {
	pt, ok := s.profiles[req.GetType()]
	if !ok {
		return nil, status.Errorf(codes.NotFound, "this plugin does not serve profile type %q", req.GetType())
	}
	adopter, can := pt.Driver.(Adopter)
	if !can {
		return nil, status.Errorf(codes.Unimplemented, "profile type %s cannot adopt existing resources", pt.Type)
	}
	var n Node
	if req.Node != nil {
		n = NodeFromProto(req.Node)
	}
	a, err := adopter.Adopt(ctx, AdoptRequest{Type: req.Type, Version: req.Version, Identity: req.Identity, Node: n, Preview: req.Preview, Snapshot: req.Snapshot})
	if err != nil {
		return &pb.AdoptResponse{Error: ErrorToProto(err)}, nil
	}
	out := &pb.AdoptResponse{PropertiesJson: encodeJSON(a.Properties)}
	if !req.Preview {
		a.Result.ID = n.ID
		out.Result = resultsToProto([]Result{a.Result})[0]
	} else if a.Result.PhysicalID != "" {
		out.Result = resultsToProto([]Result{{PhysicalID: a.Result.PhysicalID}})[0]
	}
	return out, nil
}

func failNodes(nodes []Node, err error) []Result {
	out := make([]Result, len(nodes))
	for i, n := range nodes {
		out[i] = Result{ID: n.ID, Err: err}
	}
	return out
}

func nodeOperationsToProto(ops []NodeOperation) []*pb.NodeOperation {
	var out []*pb.NodeOperation
	for _, op := range ops {
		out = append(out, &pb.NodeOperation{Name: op.Name, Description: op.Description, ParametersJson: encodeJSON(op.Parameters)})
	}
	return out
}

func nodeOperationsFromProto(ops []*pb.NodeOperation) ([]NodeOperation, error) {
	var out []NodeOperation
	for _, op := range ops {
		o := NodeOperation{Name: op.Name, Description: op.Description, Parameters: schema.Schema{}}
		if len(op.ParametersJson) > 0 {
			if err := json.Unmarshal(op.ParametersJson, &o.Parameters); err != nil {
				return nil, fmt.Errorf("the parameters of operation %s are not valid JSON: %w", op.Name, err)
			}
			if o.Parameters == nil {
				o.Parameters = schema.Schema{}
			}
		}
		out = append(out, o)
	}
	return out, nil
}

type policyServer struct {
	pb.UnimplementedPolicyServer
	*server
}

func (s *policyServer) Validate(ctx context.Context, req *pb.ValidateRequest) (*pb.ValidateResponse, error) {
	pt, ok := s.policies[req.GetSpec().GetType()]
	if !ok {
		return nil, fmt.Errorf("this plugin does not serve policy type %q", req.GetSpec().GetType())
	}
	return validateSpec(ctx, pt.Schema, pt.Versions, pt.Validate, req.Spec), nil
}

func (s *policyServer) Attach(ctx context.Context, req *pb.AttachRequest) (resp *pb.AttachResponse, _ error) {
	pt, sp, err := s.policy(req.Policy)
	if err != nil {
		return &pb.AttachResponse{Error: ErrorToProto(err)}, nil
	}
	defer s.recoverCall(ctx, "policy type "+pt.Type, func(err error) { resp = &pb.AttachResponse{Error: ErrorToProto(err)} })
	data, err := pt.Policy.Attach(ctx, sp, ClusterFromProto(req.Cluster))
	if err != nil {
		return &pb.AttachResponse{Error: ErrorToProto(err)}, nil
	}
	b, err := encodeData("binding data", data)
	if err != nil {
		return &pb.AttachResponse{Error: ErrorToProto(fmt.Errorf("policy type %s returned unusable binding data: %w", pt.Type, err))}, nil
	}
	return &pb.AttachResponse{BindingDataJson: b}, nil
}

func (s *policyServer) Detach(ctx context.Context, req *pb.AttachRequest) (resp *pb.AttachResponse, _ error) {
	pt, sp, err := s.policy(req.Policy)
	if err != nil {
		return &pb.AttachResponse{Error: ErrorToProto(err)}, nil
	}
	defer s.recoverCall(ctx, "policy type "+pt.Type, func(err error) { resp = &pb.AttachResponse{Error: ErrorToProto(err)} })
	err = pt.Policy.Detach(ctx, sp, ClusterFromProto(req.Cluster), decodeMap(req.BindingDataJson))
	return &pb.AttachResponse{Error: ErrorToProto(err)}, nil
}

func (s *policyServer) Check(ctx context.Context, req *pb.CheckRequest) (resp *pb.CheckResponse, _ error) {
	pt, sp, err := s.policy(req.Policy)
	if err != nil {
		return &pb.CheckResponse{Error: ErrorToProto(err)}, nil
	}
	defer s.recoverCall(ctx, "policy type "+pt.Type, func(err error) { resp = &pb.CheckResponse{Error: ErrorToProto(err)} })
	a := req.GetAction()
	res, err := pt.Policy.Check(ctx, CheckRequest{
		Policy: sp, Phase: req.Phase,
		Action:  Action{ID: a.GetId(), Name: a.GetAction(), Target: a.GetTarget(), Inputs: decodeMap(a.GetInputsJson()), Data: decodeMap(a.GetDataJson())},
		Cluster: ClusterFromProto(req.Cluster), BindingData: decodeMap(req.BindingDataJson), LastOp: req.LastOp, Now: req.Now,
		Hosts: HostSnapshotFromProto(req.Hosts),
	})
	if err != nil {
		return &pb.CheckResponse{Error: ErrorToProto(err)}, nil
	}
	if res.Refuse != "" {
		// Data a refusal carries (Senlin's status and status_reason) is
		// kept in the action's data, so it travels as JSON like any.
		b, err := encodeData("data", res.Data)
		if err != nil {
			return &pb.CheckResponse{Error: ErrorToProto(fmt.Errorf("policy type %s refused with unusable data: %w", pt.Type, err))}, nil
		}
		return &pb.CheckResponse{Status: "ERROR", Reason: res.Refuse, ActionDataJson: b}, nil
	}
	out, err := checkResultToProto(res.Data, s.typedDecisions.Load())
	if err != nil {
		return &pb.CheckResponse{Error: ErrorToProto(fmt.Errorf("policy type %s returned unusable data: %w", pt.Type, err))}, nil
	}
	return out, nil
}

// recoverCall, deferred in a call into a driver's or policy's code, turns
// a panic of that code into the call's error through fail: a panic would
// otherwise end the plugin process, failing every call in flight in it,
// those of other clusters included, and the engine would retry the call
// into the same panic. The stack goes to the plugin's log, for its author.
func (s *server) recoverCall(ctx context.Context, who string, fail func(error)) {
	r := recover()
	if r == nil {
		return
	}
	method, _ := grpc.Method(ctx)
	s.logger().Error("recovered from a panic in a plugin call", "component", who, "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	fail(fmt.Errorf("%s panicked in %s: %v", who, callName(method), r))
}

// callName is a gRPC method's call as the plugin guide names it:
// /grove.Profile/Create is create.
func callName(method string) string {
	if i := strings.LastIndexByte(method, '/'); i >= 0 {
		method = method[i+1:]
	}
	if method == "" {
		return "a call"
	}
	return strings.ToLower(method)
}

// logger is where the plugin's own messages go: its Logger, or JSON on
// stderr as Serve's default, which the host forwards.
func (s *server) logger() hclog.Logger {
	if s.plugin.Logger != nil {
		return s.plugin.Logger
	}
	return hclog.New(&hclog.LoggerOptions{Name: s.plugin.Name, JSONFormat: true, Output: os.Stderr})
}

// recoverUnary is the plugin server's safety net for the calls that do not
// recover on their own (validation, hosts, adoption, description): a panic
// in them is the call's error rather than the plugin process's end.
func recoverUnary(ctx context.Context, req any, info *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (resp any, err error) {
	defer recoverInto(info.FullMethod, &err)
	return handler(ctx, req)
}

// recoverStream is recoverUnary for streams (a driver's Watch).
func recoverStream(srv any, ss grpc.ServerStream, info *grpc.StreamServerInfo, handler grpc.StreamHandler) (err error) {
	defer recoverInto(info.FullMethod, &err)
	return handler(srv, ss)
}

// recoverInto, deferred, turns a panic into *err, with its stack on stderr
// (which the host keeps in the plugin's log).
func recoverInto(method string, err *error) {
	if r := recover(); r != nil {
		fmt.Fprintf(os.Stderr, "recovered from a panic in %s: %v\n%s", method, r, debug.Stack())
		*err = status.Errorf(codes.Internal, "the plugin panicked in %s: %v", callName(method), r)
	}
}
