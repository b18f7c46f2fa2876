// Package sdktest is the conformance kit a plugin author runs in `go test`
// against their own plugin binary. It starts the binary the way the agent
// does (go-plugin, the Grove handshake) and checks the describe output, the
// schemas, create/check/update/delete round trips, idempotent deletes, error
// shapes, deadlines and concurrent calls. The built-in plugins pass it too.
//
//	func TestConformance(t *testing.T) {
//		sdktest.Run(t, sdktest.Options{Command: []string{"./bin/my-plugin"}},
//			[]sdktest.ProfileCase{{Type: "my.profile", Version: "1.0", Properties: map[string]any{...}}},
//			[]sdktest.PolicyCase{{Type: "my.policy", Version: "1.0", Properties: map[string]any{...}}})
//	}
package sdktest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grovehq/grove/plugins/sdk"
	pb "github.com/grovehq/grove/plugins/sdk/proto"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// Options says how to run the plugin.
type Options struct {
	// Command is the plugin binary and its arguments.
	Command []string
	// Env is added to the plugin's environment. GROVE_PLUGIN_DATA_DIR is set
	// to a fresh temporary directory.
	Env []string
}

// ProfileCase exercises one profile type.
type ProfileCase struct {
	Type       string
	Version    string
	Properties map[string]any
	// Updated are properties differing only in updatable ones; nil skips
	// the update check.
	Updated map[string]any
	// NodeData returns the data the engine would hand node i (a port for a
	// driver that asks for one). Optional.
	NodeData func(i int) map[string]any
	// BatchSize is how many nodes each call carries (default 3).
	BatchSize int
	// NoBackend says the driver keeps nothing anywhere (like grove.noop), so
	// a check after delete cannot tell the node is gone.
	NoBackend bool
}

// PolicyCase exercises one policy type.
type PolicyCase struct {
	Type       string
	Version    string
	Properties map[string]any
	// Phase and Action of the check (default BEFORE CLUSTER_SCALE_IN).
	Phase  string
	Action string
	Inputs map[string]any
	// Cluster is the snapshot to check against (default: 3 ACTIVE nodes).
	Cluster *sdk.Cluster
}

// Plugin is a running plugin under test.
type Plugin struct {
	Client      *sdk.Client
	Description sdk.DescriptionJSON
	kill        func()
}

// Start runs the plugin binary through go-plugin and returns its client;
// t.Cleanup stops it.
func Start(t testing.TB, opts Options) *Plugin {
	t.Helper()
	if len(opts.Command) == 0 {
		t.Fatal("sdktest: Options.Command is empty")
	}
	dir := t.TempDir()
	cmd := exec.Command(opts.Command[0], opts.Command[1:]...)
	cmd.Env = append(append(os.Environ(), "GROVE_PLUGIN_DATA_DIR="+dir), opts.Env...)
	client := goplugin.NewClient(sdk.ClientConfig(cmd, hclog.New(&hclog.LoggerOptions{Name: "plugin", Level: hclog.Warn, Output: os.Stderr})))
	t.Cleanup(client.Kill)
	proto, err := client.Client()
	if err != nil {
		t.Fatalf("sdktest: start %v: %v", opts.Command, err)
	}
	raw, err := proto.Dispense(sdk.PluginName)
	if err != nil {
		t.Fatalf("sdktest: dispense: %v", err)
	}
	c := raw.(*sdk.Client)
	ctx := context.Background()
	desc, err := c.Info.Describe(ctx, &pb.DescribeRequest{})
	if err != nil {
		t.Fatalf("sdktest: describe over gRPC: %v", err)
	}
	dj, err := sdk.DescriptionToJSON(desc)
	if err != nil {
		t.Fatalf("sdktest: %v", err)
	}
	if _, err := c.Info.Configure(ctx, &pb.ConfigureRequest{ProfileApiVersions: sdk.ProfileAPIVersions(), PolicyApiVersions: sdk.PolicyAPIVersions(), DataDir: dir}); err != nil {
		t.Fatalf("sdktest: the plugin does not speak this SDK's API versions: %v", err)
	}
	return &Plugin{Client: c, Description: dj, kill: client.Kill}
}

// Run runs every check against the plugin.
func Run(t *testing.T, opts Options, profiles []ProfileCase, policies []PolicyCase) {
	p := Start(t, opts)
	t.Run("Describe", func(t *testing.T) { checkDescribe(t, opts, p) })
	t.Run("Schemas", func(t *testing.T) { checkSchemas(t, p) })
	t.Run("UnknownTypeIsAPermanentError", func(t *testing.T) { checkUnknownType(t, p) })
	for _, pc := range profiles {
		pc := pc
		t.Run("Profile/"+pc.Type, func(t *testing.T) { checkProfile(t, p, pc) })
	}
	for _, pc := range policies {
		pc := pc
		t.Run("Policy/"+pc.Type, func(t *testing.T) { checkPolicy(t, p, pc) })
	}
}

func checkDescribe(t *testing.T, opts Options, p *Plugin) {
	out, err := exec.Command(opts.Command[0], append(opts.Command[1:], "describe")...).Output()
	if err != nil {
		t.Fatalf("`%s describe` failed: %v", strings.Join(opts.Command, " "), err)
	}
	var d sdk.DescriptionJSON
	if err := json.Unmarshal(out, &d); err != nil {
		t.Fatalf("`describe` must print JSON: %v\n%s", err, out)
	}
	if d.Name == "" || d.Version == "" {
		t.Errorf("describe: name and version are required: %+v", d)
	}
	if d.HandshakeVersion != sdk.HandshakeVersion {
		t.Errorf("describe: handshake version %d, this SDK speaks %d", d.HandshakeVersion, sdk.HandshakeVersion)
	}
	if len(d.Components) == 0 {
		t.Fatal("describe: the plugin serves no component")
	}
	seen := map[string]bool{}
	for _, c := range d.Components {
		key := c.Kind + "/" + c.Type
		if seen[key] {
			t.Errorf("describe: %s listed twice", key)
		}
		seen[key] = true
		if c.Kind != "profile" && c.Kind != "policy" {
			t.Errorf("describe: %s has kind %q", c.Type, c.Kind)
		}
		if c.Type == "" || len(c.Versions) == 0 || len(c.APIVersions) == 0 {
			t.Errorf("describe: %s needs a type, versions and API versions: %+v", key, c)
		}
		if c.Description == "" {
			t.Errorf("describe: %s has no description; users read it in `grove profile types`", key)
		}
	}
	if len(d.Components) != len(p.Description.Components) {
		t.Errorf("describe prints %d components but the served plugin has %d", len(d.Components), len(p.Description.Components))
	}
}

var knownTypes = []string{schema.String, schema.Integer, schema.Number, schema.Boolean, schema.List, schema.Map}

func checkSchemas(t *testing.T, p *Plugin) {
	for _, c := range p.Description.Components {
		checkSchema(t, c.Type+".properties", c.Schema)
	}
}

func checkSchema(t *testing.T, prefix string, s schema.Schema) {
	for name, prop := range s {
		field := prefix + "." + name
		checkProperty(t, field, prop)
		if prop.Default != nil {
			if prop.Required {
				t.Errorf("%s: a required property cannot have a default", field)
			}
			probe := *prop
			probe.Required = false
			if _, diags := (schema.Schema{name: &probe}).Validate(prefix, map[string]any{name: prop.Default}); len(diags) > 0 {
				t.Errorf("%s: the default does not pass its own schema: %v", field, diags)
			}
		}
	}
}

func checkProperty(t *testing.T, field string, prop *schema.Property) {
	if !slices.Contains(knownTypes, prop.Type) {
		t.Errorf("%s: unknown type %q; use one of %v", field, prop.Type, knownTypes)
	}
	for _, c := range prop.Constraints {
		if !slices.Contains([]string{"AllowedValues", "Range", "Length", "Pattern"}, c.Type) {
			t.Errorf("%s: unknown constraint %q", field, c.Type)
		}
	}
	if prop.Schema != nil {
		if prop.Type != schema.Map {
			t.Errorf("%s: only a Map may have a nested schema", field)
		}
		checkSchema(t, field, prop.Schema)
	}
	if prop.Elem != nil {
		checkProperty(t, field+"[]", prop.Elem)
	}
}

func checkUnknownType(t *testing.T, p *Plugin) {
	_, err := p.Client.Batch(context.Background(), sdk.CallCheck, sdk.Spec{Type: "sdktest.no-such-type", Version: "1.0"}, []sdk.Node{{ID: "x"}})
	if err == nil || !strings.Contains(err.Error(), "sdktest.no-such-type") {
		t.Errorf("a call for a type the plugin does not serve must fail naming it, got %v", err)
	}
	if sdk.IsRetryable(err) {
		t.Errorf("an unknown type is not worth retrying, but the error is marked retryable")
	}
}

func nodes(pc ProfileCase, prefix string) []sdk.Node {
	n := pc.BatchSize
	if n <= 0 {
		n = 3
	}
	out := make([]sdk.Node, n)
	for i := range out {
		out[i] = sdk.Node{ID: fmt.Sprintf("%s-%d-%d", prefix, time.Now().UnixNano(), i), Name: fmt.Sprintf("sdktest-%s-%d", prefix, i), Index: i + 1,
			ClusterID: "sdktest-cluster", ClusterName: "sdktest", Data: map[string]any{}}
		if pc.NodeData != nil {
			out[i].Data = pc.NodeData(i)
		}
	}
	return out
}

// apply copies results (physical id, state, data) back into the nodes, as
// the engine stores them.
func apply(t *testing.T, what string, ns []sdk.Node, res []sdk.Result) {
	t.Helper()
	if len(res) != len(ns) {
		t.Fatalf("%s: %d results for %d nodes; return one result per node", what, len(res), len(ns))
	}
	byID := map[string]sdk.Result{}
	for _, r := range res {
		byID[r.ID] = r
	}
	for i := range ns {
		r, ok := byID[ns[i].ID]
		if !ok {
			t.Fatalf("%s: no result for node %s; results are matched by node id", what, ns[i].ID)
		}
		if r.Err != nil {
			t.Fatalf("%s: node %s failed: %v", what, ns[i].Name, r.Err)
		}
		if r.PhysicalID != "" {
			ns[i].PhysicalID = r.PhysicalID
		}
		if r.State != nil {
			ns[i].State = r.State
		}
		if r.Data != nil {
			ns[i].Data = r.Data
		}
	}
}

func checkProfile(t *testing.T, p *Plugin, pc ProfileCase) {
	ctx := context.Background()
	spec := sdk.Spec{ID: "sdktest-profile", Name: "sdktest", Type: pc.Type, Version: pc.Version, Properties: pc.Properties}
	diags, err := p.Client.ValidateProfile(ctx, spec)
	if err != nil || len(diags) > 0 {
		t.Fatalf("validate the case's own spec: %v %v", diags, err)
	}
	bad := sdk.Spec{Type: pc.Type, Version: pc.Version, Properties: with(pc.Properties, "sdktest_unknown_property", 1)}
	diags, _ = p.Client.ValidateProfile(ctx, bad)
	if len(diags) == 0 || !strings.Contains(diags.Error(), "sdktest_unknown_property") {
		t.Errorf("an unknown property must be reported naming it, got %v", diags)
	}
	ns := nodes(pc, "rt")
	res, err := p.Client.Batch(ctx, sdk.CallCreate, spec, ns)
	if err != nil {
		t.Fatalf("create: %v", err)
	}
	apply(t, "create", ns, res)
	t.Cleanup(func() { p.Client.Batch(context.Background(), sdk.CallDelete, spec, ns) })
	// Each node is its own resource, in one call and across calls: the
	// engine refuses a physical id another node of the type holds, since
	// deleting either node would destroy the other's resource.
	held := map[string]string{}
	for _, n := range ns {
		if other, ok := held[n.PhysicalID]; ok && n.PhysicalID != "" {
			t.Errorf("create gave nodes %s and %s one physical id %q; give each node its own resource", other, n.Name, n.PhysicalID)
		}
		held[n.PhysicalID] = n.Name
	}
	// The node after the batch's, with the data the engine would give it
	// (its own port, for a driver that asks for one).
	one := nodes(ProfileCase{BatchSize: len(ns) + 1, NodeData: pc.NodeData}, "one")[len(ns):]
	if res, err := p.Client.Batch(ctx, sdk.CallCreate, spec, one); err == nil {
		apply(t, "create in a call of its own", one, res)
		if other, ok := held[one[0].PhysicalID]; ok && one[0].PhysicalID != "" {
			t.Errorf("a create in a call of its own gave node %s the physical id %q node %s holds; give each node its own resource", one[0].Name, one[0].PhysicalID, other)
		}
		if _, err := p.Client.Batch(ctx, sdk.CallDelete, spec, one); err != nil {
			t.Errorf("delete the node created in a call of its own: %v", err)
		}
	} else {
		t.Errorf("create in a call of its own: %v", err)
	}

	again, err := p.Client.Batch(ctx, sdk.CallCreate, spec, ns)
	if err != nil {
		t.Fatalf("create again: %v", err)
	}
	for _, r := range again {
		if r.Err != nil {
			t.Errorf("create must be idempotent per node id (the engine retries after a crash): %v", r.Err)
		}
	}
	checkHealthy(t, p, spec, ns, true, "check after create")

	if pc.Updated != nil {
		newSpec := spec
		newSpec.ID, newSpec.Properties = "sdktest-profile-2", pc.Updated
		res, err := p.Client.Update(ctx, spec, newSpec, ns)
		if err != nil {
			t.Fatalf("update: %v", err)
		}
		apply(t, "update", ns, res)
		checkHealthy(t, p, newSpec, ns, true, "check after update")
		spec = newSpec
	}

	t.Run("Concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		errs := make(chan error, 8)
		for i := 0; i < 8; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := p.Client.Batch(ctx, sdk.CallCheck, spec, ns)
				if err == nil && len(res) != len(ns) {
					err = fmt.Errorf("%d results for %d nodes", len(res), len(ns))
				}
				errs <- err
			}()
		}
		wg.Wait()
		close(errs)
		for err := range errs {
			if err != nil {
				t.Errorf("concurrent check: %v", err)
			}
		}
	})

	t.Run("Deadline", func(t *testing.T) {
		short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
		defer cancel()
		extra := nodes(pc, "dl")
		start := time.Now()
		res, err := p.Client.Batch(short, sdk.CallCreate, spec, extra)
		if took := time.Since(start); took > 5*time.Second {
			t.Errorf("a call with a 20ms deadline took %s; honour ctx's deadline", took)
		}
		if err != nil && status.Code(err) != codes.DeadlineExceeded {
			t.Errorf("a call cut by its deadline should fail with DeadlineExceeded, got %v", err)
		}
		// Nodes cut short by the deadline fail as retryable: the engine
		// tries them again. Whatever was created must still be deletable.
		for _, r := range res {
			if r.Err != nil && !sdk.IsRetryable(r.Err) {
				t.Errorf("node %s failed because of the deadline but the error is not retryable: %v", r.ID, r.Err)
			}
			for i := range extra {
				if extra[i].ID == r.ID && r.Err == nil {
					extra[i].PhysicalID, extra[i].State = r.PhysicalID, r.State
				}
			}
		}
		if _, err := p.Client.Batch(ctx, sdk.CallDelete, spec, extra); err != nil {
			t.Errorf("delete after a deadline: %v", err)
		}
		checkHealthy(t, p, spec, ns, true, "the plugin keeps working after a deadline")
	})

	res, err = p.Client.Batch(ctx, sdk.CallDelete, spec, ns)
	if err != nil {
		t.Fatalf("delete: %v", err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Fatalf("delete: %v", r.Err)
		}
	}
	res, err = p.Client.Batch(ctx, sdk.CallDelete, spec, ns)
	if err != nil {
		t.Fatalf("delete twice: %v", err)
	}
	for _, r := range res {
		if r.Err != nil {
			t.Errorf("delete must be idempotent: deleting a deleted node failed: %v", r.Err)
		}
	}
	if !pc.NoBackend {
		checkHealthy(t, p, spec, ns, false, "check after delete")
	}
}

func checkHealthy(t *testing.T, p *Plugin, spec sdk.Spec, ns []sdk.Node, want bool, what string) {
	t.Helper()
	res, err := p.Client.Batch(context.Background(), sdk.CallCheck, spec, ns)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	for _, r := range res {
		if r.Err == nil && r.Healthy != want {
			t.Errorf("%s: node %s healthy=%v, want %v (%s)", what, r.ID, r.Healthy, want, r.Reason)
		}
		if r.Err != nil && want {
			t.Errorf("%s: node %s: %v", what, r.ID, r.Err)
		}
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	out := map[string]any{k: v}
	for kk, vv := range m {
		out[kk] = vv
	}
	return out
}

func checkPolicy(t *testing.T, p *Plugin, pc PolicyCase) {
	ctx := context.Background()
	spec := sdk.Spec{ID: "sdktest-policy", Name: "sdktest", Type: pc.Type, Version: pc.Version, Properties: pc.Properties}
	diags, err := p.Client.ValidatePolicy(ctx, spec)
	if err != nil || len(diags) > 0 {
		t.Fatalf("validate the case's own spec: %v %v", diags, err)
	}
	diags, _ = p.Client.ValidatePolicy(ctx, sdk.Spec{Type: pc.Type, Version: pc.Version, Properties: with(pc.Properties, "sdktest_unknown_property", 1)})
	if len(diags) == 0 || !strings.Contains(diags.Error(), "sdktest_unknown_property") {
		t.Errorf("an unknown property must be reported naming it, got %v", diags)
	}
	cl := sdk.Cluster{ID: "sdktest-cluster", Name: "sdktest", ProfileType: "sdktest.profile-1.0", DesiredCapacity: 3, MaxSize: -1, Nodes: []sdk.ClusterNode{
		{ID: "n1", Name: "n1", Status: "ACTIVE", Index: 1, CreatedAt: 1}, {ID: "n2", Name: "n2", Status: "ACTIVE", Index: 2, CreatedAt: 2},
		{ID: "n3", Name: "n3", Status: "ACTIVE", Index: 3, CreatedAt: 3}}}
	if pc.Cluster != nil {
		cl = *pc.Cluster
	}
	data, err := p.Client.Attach(ctx, spec, cl)
	if err != nil {
		t.Fatalf("attach: %v", err)
	}
	phase, action := pc.Phase, pc.Action
	if phase == "" {
		phase = "BEFORE"
	}
	if action == "" {
		action = "CLUSTER_SCALE_IN"
	}
	inputs := pc.Inputs
	if inputs == nil {
		inputs = map[string]any{}
	}
	req := sdk.CheckRequest{Policy: spec, Phase: phase, Action: sdk.Action{ID: "sdktest-action", Name: action, Target: cl.ID, Inputs: inputs},
		Cluster: cl, BindingData: data, Now: time.Now().UnixMicro()}
	if _, err := p.Client.Check(ctx, req); err != nil {
		t.Fatalf("check: %v", err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := p.Client.Check(ctx, req); err != nil {
				t.Errorf("concurrent check: %v", err)
			}
		}()
	}
	wg.Wait()
	if err := p.Client.Detach(ctx, spec, cl, data); err != nil {
		t.Fatalf("detach: %v", err)
	}
}
