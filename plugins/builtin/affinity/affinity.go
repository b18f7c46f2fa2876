// Package affinity is senlin.policy.affinity: it keeps a cluster's nodes
// together on one host or apart on different hosts. On os.nova.server
// clusters it does it Senlin's way, through a Nova server group (inherited
// from the profile's scheduler_hints.group or created at attach), with an
// availability zone and the vSphere DRS extension; on vsphere.vm clusters
// through a VM-VM DRS rule; on container.docker clusters, whose driver
// reports its engines as hosts, by naming each new node's host.
//
// The decisions are pure functions in decide/; this package reads the
// cloud around them. Files: affinity.go (the type, attach, detach, check),
// nova.go, vsphere.go, hosts.go (one backend each).
package affinity

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/grovehq/grove/plugins/builtin/affinity/decide"
	"github.com/grovehq/grove/plugins/builtin/nova"
	"github.com/grovehq/grove/plugins/builtin/vsphere"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is Senlin's type name, so Senlin specs work unchanged.
const TypeName = "senlin.policy.affinity"

// Priority is Senlin's priority of the affinity policy class.
const Priority = 300

// Binding data keys, Senlin's.
const (
	keyGroup     = "servergroup_id"
	keyInherited = "inherited_group"
)

// Properties are the policy's properties, as the schema fills them in.
type Properties struct {
	ServerGroup struct {
		Name     string `json:"name"`
		Policies string `json:"policies"`
	} `json:"servergroup"`
	AvailabilityZone   string `json:"availability_zone"`
	EnableDRSExtension bool   `json:"enable_drs_extension"`
}

// Schema is the seed's properties, exactly.
func Schema() schema.Schema {
	policies := make([]any, len(decide.Policies))
	for i, p := range decide.Policies {
		policies[i] = p
	}
	return schema.Schema{
		"servergroup": {Type: schema.Map, Description: "Properties of the VM server group.", Default: map[string]any{},
			Schema: schema.Schema{
				"name": {Type: schema.String, Description: "The name of the server group."},
				"policies": {Type: schema.String, Default: decide.AntiAffinity, Description: "The server group policies.",
					Constraints: []schema.Constraint{schema.AllowedValues(policies...)}},
			}},
		"availability_zone":    {Type: schema.String, Description: "Name of the availability zone to place the nodes."},
		"enable_drs_extension": {Type: schema.Boolean, Default: false, Description: "Enable vSphere DRS extension."},
	}
}

// Type returns the policy registration. The drivers it is given are the
// ones whose connections it reuses (each keeps its own clients).
func Type() sdk.PolicyType {
	p := &policy{nova: nova.New(), vsphere: vsphere.New()}
	return sdk.PolicyType{
		Type:     TypeName,
		Versions: []string{"1.0"},
		Description: "Keeps a cluster's nodes together or apart: a Nova server group (inherited from the profile or created), " +
			"a vSphere DRS rule, or distinct container engines.",
		Schema: Schema(),
		Targets: []sdk.Target{
			{Phase: "BEFORE", Action: "CLUSTER_SCALE_OUT"}, {Phase: "BEFORE", Action: "CLUSTER_RESIZE"}, {Phase: "BEFORE", Action: "NODE_CREATE"},
		},
		Priority:  Priority,
		Singleton: true,
		Policy:    p,
	}
}

// backend is the part of the policy one kind of cluster needs.
type backend interface {
	attach(ctx context.Context, pr Properties, c sdk.Cluster) (map[string]any, error)
	detach(ctx context.Context, pr Properties, c sdk.Cluster, data map[string]any) error
	// place returns the placements of count new nodes, or a refusal with
	// the data that says more of it.
	place(ctx context.Context, pr Properties, req sdk.CheckRequest, count int) ([]decide.Entry, string, map[string]any, error)
}

type policy struct {
	nova    *nova.Driver
	vsphere *vsphere.Driver
}

// Profile types the policy handles, by backend.
const (
	novaType      = nova.TypeName
	vsphereType   = vsphere.TypeName
	containerType = "container.docker"
)

func (p *policy) backend(c sdk.Cluster) (backend, error) {
	typ := c.Profile.Type
	if typ == "" {
		typ, _, _ = strings.Cut(c.ProfileType, "-")
	}
	switch typ {
	case novaType:
		return novaBackend{d: p.nova}, nil
	case vsphereType:
		return vsphereBackend{d: p.vsphere}, nil
	case containerType:
		return hostsBackend{}, nil
	}
	return nil, fmt.Errorf("The affinity policy handles clusters of profile types %s, %s and %s; cluster '%s' has %s.",
		novaType, vsphereType, containerType, c.Name, typ)
}

func props(p sdk.Spec) (Properties, error) {
	pr := Properties{}
	pr.ServerGroup.Policies = decide.AntiAffinity
	if err := p.Decode(&pr); err != nil {
		return pr, fmt.Errorf("the properties of policy %s cannot be read: %w", p.ID, err)
	}
	if pr.ServerGroup.Policies == "" {
		pr.ServerGroup.Policies = decide.AntiAffinity
	}
	return pr, nil
}

// Attach records how the cluster's nodes are kept together or apart: the
// server group, the DRS rule.
func (p *policy) Attach(ctx context.Context, spec sdk.Spec, c sdk.Cluster) (map[string]any, error) {
	pr, err := props(spec)
	if err != nil {
		return nil, err
	}
	b, err := p.backend(c)
	if err != nil {
		return nil, err
	}
	return b.attach(ctx, pr, c)
}

// Detach removes what Attach made (never what it inherited).
func (p *policy) Detach(ctx context.Context, spec sdk.Spec, c sdk.Cluster, data map[string]any) error {
	pr, err := props(spec)
	if err != nil {
		return err
	}
	b, err := p.backend(c)
	if err != nil {
		return err
	}
	return b.detach(ctx, pr, c, data)
}

// Check writes data.placement for the nodes the action creates; an action
// that creates none (a shrinking resize) passes untouched.
func (p *policy) Check(ctx context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	if req.Phase != "BEFORE" {
		return sdk.CheckResult{}, nil
	}
	pr, err := props(req.Policy)
	if err != nil {
		return sdk.CheckResult{}, err
	}
	count, err := countOf(req)
	if err != nil {
		return sdk.CheckResult{Refuse: err.Error()}, nil
	}
	if count == 0 {
		return sdk.CheckResult{}, nil
	}
	b, err := p.backend(req.Cluster)
	if err != nil {
		return sdk.CheckResult{Refuse: err.Error()}, nil
	}
	entries, refuse, data, err := b.place(ctx, pr, req, count)
	if err != nil {
		return sdk.CheckResult{}, err
	}
	if refuse != "" {
		return sdk.CheckResult{Refuse: refuse, Data: data}, nil
	}
	// A zone or region placement policy may have placed the nodes first.
	return sdk.CheckResult{Data: map[string]any{"placement": decide.Merge(req.Action.Data[sdk.DataPlacement], decide.Placement(entries))}}, nil
}

// refusal is Senlin's status data of a failed check.
func refusal(reason string) map[string]any {
	return map[string]any{"status": "ERROR", "status_reason": reason}
}

// countOf reads what decide.Count needs from the action.
func countOf(req sdk.CheckRequest) (int, error) {
	cr := decide.CountRequest{Action: req.Action.Name}
	var decided sdk.CreationData
	if _, err := req.Action.DecodeData(sdk.DataCreation, &decided); err != nil {
		return 0, fmt.Errorf("The creation decided by an earlier policy cannot be read: %w.", err)
	}
	cr.Decided = decided.Count
	switch req.Action.Name {
	case "CLUSTER_SCALE_OUT":
		var in sdk.ClusterScaleInputs
		if err := req.Action.DecodeInputs(&in); err != nil {
			return 0, unreadable(req.Action, err)
		}
		cr.ScaleCount = in.Count
	case "CLUSTER_RESIZE":
		var in sdk.ClusterResizeInputs
		if err := req.Action.DecodeInputs(&in); err != nil {
			return 0, unreadable(req.Action, err)
		}
		c := req.Cluster
		cr.Resize, cr.Bounds, cr.Current = in.Resize(), boundsOf(c), len(c.Nodes)
	}
	return decide.Count(cr)
}

func unreadable(a sdk.Action, err error) error {
	return fmt.Errorf("The inputs of action %s cannot be read: %w.", a.Name, err)
}

// errNoBinding is a check without the binding data attach recorded.
var errNoBinding = errors.New("The policy's binding records no server group; detach and attach the policy again.")
