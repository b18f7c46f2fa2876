// Package loadbalance is senlin.policy.loadbalance: it puts an
// os.nova.server cluster's nodes behind an Octavia load balancer, with
// Senlin's properties, defaults, targets and semantics. Attach creates the
// load balancer, listener, pool and health monitor (or adopts an existing
// load balancer) and adds every node as a member; members follow the
// cluster's actions; detach deletes what the policy created, or only its
// members of a load balancer it adopted. Which nodes join and leave is
// decided by decide/ (shared with grove.policy.haproxy); the Octavia client
// is the Nova driver's, logged in with the profile's credentials.
package loadbalance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack/compute/v2/attachinterfaces"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/listeners"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/loadbalancers"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/monitors"
	"github.com/gophercloud/gophercloud/v2/openstack/loadbalancer/v2/pools"

	"github.com/grovehq/grove/plugins/builtin/loadbalance/decide"
	"github.com/grovehq/grove/plugins/builtin/nova"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is Senlin's type name, so Senlin specs work unchanged.
const TypeName = "senlin.policy.loadbalance"

// Priority is Senlin's priority of the load-balancing policy class.
const Priority = 500

// Senlin's reasons when a member cannot be added or removed.
const (
	ReasonAdd    = "Failed in adding node into lb pool."
	ReasonRemove = "Failed in removing node from lb pool."
)

// Properties are the policy's properties, as the schema fills them in.
type Properties struct {
	Pool struct {
		Protocol           string `json:"protocol"`
		ProtocolPort       int    `json:"protocol_port"`
		Subnet             string `json:"subnet"`
		LBMethod           string `json:"lb_method"`
		AdminStateUp       bool   `json:"admin_state_up"`
		SessionPersistence struct {
			Type       string `json:"type"`
			CookieName string `json:"cookie_name"`
		} `json:"session_persistence"`
		ID string `json:"id"`
	} `json:"pool"`
	VIP struct {
		Subnet          string `json:"subnet"`
		Network         string `json:"network"`
		Address         string `json:"address"`
		ConnectionLimit int    `json:"connection_limit"`
		Protocol        string `json:"protocol"`
		ProtocolPort    int    `json:"protocol_port"`
		AdminStateUp    bool   `json:"admin_state_up"`
	} `json:"vip"`
	HealthMonitor struct {
		Type          string `json:"type"`
		Delay         int    `json:"delay"`
		Timeout       int    `json:"timeout"`
		MaxRetries    int    `json:"max_retries"`
		AdminStateUp  bool   `json:"admin_state_up"`
		HTTPMethod    string `json:"http_method"`
		URLPath       string `json:"url_path"`
		ExpectedCodes string `json:"expected_codes"`
		ID            string `json:"id"`
	} `json:"health_monitor"`
	LBStatusTimeout  int    `json:"lb_status_timeout"`
	LoadBalancer     string `json:"loadbalancer"`
	AvailabilityZone string `json:"availability_zone"`
	FlavorID         string `json:"flavor_id"`
}

func allowed(v ...string) []schema.Constraint {
	a := make([]any, len(v))
	for i, s := range v {
		a[i] = s
	}
	return []schema.Constraint{schema.AllowedValues(a...)}
}

func port() []schema.Constraint {
	return []schema.Constraint{schema.Range(schema.F(1), schema.F(65535))}
}

// Schema is Senlin's properties of senlin.policy.loadbalance 1.3.
func Schema() schema.Schema {
	str := func(d string) *schema.Property { return &schema.Property{Type: schema.String, Description: d} }
	return schema.Schema{
		"pool": {Type: schema.Map, Required: true, Description: "LB pool properties.", Schema: schema.Schema{
			"protocol":       {Type: schema.String, Default: "HTTP", Description: "Protocol used for load balancing.", Constraints: allowed("HTTP", "HTTPS", "TCP")},
			"protocol_port":  {Type: schema.Integer, Default: int64(80), Description: "Port on which servers are running on the nodes.", Constraints: port()},
			"subnet":         {Type: schema.String, Required: true, Description: "Name or ID of subnet for the port on which nodes can be connected."},
			"lb_method":      {Type: schema.String, Default: "ROUND_ROBIN", Description: "Load balancing algorithm.", Constraints: allowed("ROUND_ROBIN", "LEAST_CONNECTIONS", "SOURCE_IP")},
			"admin_state_up": {Type: schema.Boolean, Default: true, Description: "Administrative state of the pool."},
			"session_persistence": {Type: schema.Map, Default: map[string]any{}, Description: "Session persistence configuration.", Schema: schema.Schema{
				"type":        {Type: schema.String, Description: "Session persistence type.", Constraints: allowed("SOURCE_IP", "HTTP_COOKIE", "APP_COOKIE", "NONE")},
				"cookie_name": str("Name of cookie if type set to APP_COOKIE."),
			}},
			"id": str("ID of pool for the cluster on which nodes can be connected."),
		}},
		"vip": {Type: schema.Map, Default: map[string]any{}, Description: "VIP address and port of the pool.", Schema: schema.Schema{
			"subnet":           str("Name or ID of Subnet on which the VIP address will be allocated. One of Subnet or Network is required."),
			"network":          str("Name or ID of Network on which the VIP address will be allocated. One of Subnet or Network is required."),
			"address":          str("IP address of the VIP."),
			"connection_limit": {Type: schema.Integer, Default: int64(-1), Description: "Maximum number of connections per second allowed for this VIP.", Constraints: []schema.Constraint{schema.Range(schema.F(-1), schema.F(math.MaxInt32))}},
			"protocol":         {Type: schema.String, Default: "HTTP", Description: "Protocol used for VIP.", Constraints: allowed("HTTP", "HTTPS", "TCP", "TERMINATED_HTTPS")},
			"protocol_port":    {Type: schema.Integer, Default: int64(80), Description: "TCP port to listen on.", Constraints: port()},
			"admin_state_up":   {Type: schema.Boolean, Default: true, Description: "Administrative state of the VIP."},
		}},
		"health_monitor": {Type: schema.Map, Default: map[string]any{}, Description: "Health monitor for loadbalancer.", Schema: schema.Schema{
			"type":           {Type: schema.String, Default: "PING", Description: "The type of probe sent by the loadbalancer to verify the member state.", Constraints: allowed("PING", "TCP", "HTTP", "HTTPS")},
			"delay":          {Type: schema.Integer, Default: int64(10), Description: "The amount of time in seconds between sending probes to members.", Constraints: []schema.Constraint{schema.Range(schema.F(1), schema.F(math.MaxInt32))}},
			"timeout":        {Type: schema.Integer, Default: int64(5), Description: "The maximum time in seconds that a monitor waits to connect before it times out.", Constraints: []schema.Constraint{schema.Range(schema.F(1), schema.F(math.MaxInt32))}},
			"max_retries":    {Type: schema.Integer, Default: int64(3), Description: "The number of allowed connection failures before changing the status of the member to INACTIVE.", Constraints: []schema.Constraint{schema.Range(schema.F(1), schema.F(10))}},
			"admin_state_up": {Type: schema.Boolean, Default: true, Description: "Administrative state of the health monitor."},
			"http_method":    {Type: schema.String, Description: "The HTTP method that the monitor uses for requests.", Constraints: allowed("GET", "POST", "PUT", "DELETE")},
			"url_path":       str("The HTTP path of the request sent by the monitor to test the health of a member."),
			"expected_codes": str("Expected HTTP codes for a passing HTTP(S) monitor."),
			"id":             str("ID of the health manager for the loadbalancer."),
		}},
		"lb_status_timeout": {Type: schema.Integer, Default: int64(300), Description: "Time in second to wait for loadbalancer to become ready after senlin requests LBaaS V2 service for operations.",
			Constraints: []schema.Constraint{schema.Range(schema.F(1), schema.F(math.MaxInt32))}},
		"loadbalancer":      str("Name or ID of loadbalancer for the cluster on which nodes can be connected."),
		"availability_zone": str("Name of the loadbalancer availability zone to use for creation of the loadbalancer (version 1.2)."),
		"flavor_id":         str("ID of octavia loadbalancer flavor to use for creation of the loadbalancer (version 1.3)."),
	}
}

// Type returns the policy registration. The Nova driver it is given is
// the one whose connections it reuses.
func Type() sdk.PolicyType {
	targets := make([]sdk.Target, len(decide.Targets))
	for i, t := range decide.Targets {
		targets[i] = sdk.Target{Phase: t[0], Action: t[1]}
	}
	return sdk.PolicyType{
		Type:     TypeName,
		Versions: []string{"1.0", "1.1", "1.2", "1.3"},
		Description: "Puts an os.nova.server cluster behind an Octavia load balancer (created, or an existing one adopted); " +
			"members follow the nodes.",
		Schema:    Schema(),
		Targets:   targets,
		Priority:  Priority,
		Singleton: true,
		Policy:    &policy{nova: nova.New()},
		Validate: func(_ context.Context, spec sdk.Spec) schema.Diagnostics {
			var p Properties
			if err := spec.Decode(&p); err != nil {
				return schema.Diagnostics{{Field: "properties", Message: err.Error()}}
			}
			return Check(spec.Version, p)
		},
	}
}

// Check is what the schema cannot say of a spec.
func Check(version string, p Properties) schema.Diagnostics {
	var ds schema.Diagnostics
	if p.VIP.Subnet == "" && p.VIP.Network == "" {
		ds = append(ds, schema.Diagnostic{Field: "properties.vip", Message: "needs a subnet or a network: at least one of vip.subnet and vip.network is required."})
	}
	if p.AvailabilityZone != "" && (version == "1.0" || version == "1.1") {
		ds = append(ds, schema.Diagnostic{Field: "properties.availability_zone", Message: "is available from version 1.2; use version 1.2 or later."})
	}
	if p.FlavorID != "" && version != "1.3" {
		ds = append(ds, schema.Diagnostic{Field: "properties.flavor_id", Message: "is available from version 1.3; use version 1.3."})
	}
	if p.LoadBalancer != "" && p.Pool.ID == "" {
		ds = append(ds, schema.Diagnostic{Field: "properties.pool.id", Message: "is required with an existing loadbalancer: name the pool the nodes join."})
	}
	return ds
}

type policy struct {
	nova *nova.Driver
}

// Binding data keys, Senlin's.
const (
	keyLB          = "loadbalancer"
	keyListener    = "listener"
	keyPool        = "pool"
	keyHM          = "healthmonitor"
	keyPreexisting = "preexisting"
	keyVIP         = "vip_address"
)

type binding struct {
	lb      *gophercloud.ServiceClient
	props   Properties
	prefix  string
	timeout time.Duration
	data    map[string]any
}

func (p *policy) open(ctx context.Context, spec sdk.Spec, c sdk.Cluster, data map[string]any) (*binding, error) {
	var pr Properties
	if err := spec.Decode(&pr); err != nil {
		return nil, fmt.Errorf("The properties of policy '%s' cannot be read: %w", spec.Name, err)
	}
	typ := c.Profile.Type
	if typ == "" {
		typ, _, _ = strings.Cut(c.ProfileType, "-")
	}
	if typ != nova.TypeName {
		return nil, fmt.Errorf("The load-balancing policy handles clusters of profile type %s; cluster '%s' has %s.", nova.TypeName, c.Name, typ)
	}
	lb, err := p.nova.LoadBalancer(ctx, c.Profile)
	if err != nil {
		return nil, err
	}
	id := c.ID
	if len(id) > 8 {
		id = id[:8]
	}
	return &binding{lb: lb, props: pr, prefix: "grove-" + id + "-", timeout: time.Duration(pr.LBStatusTimeout) * time.Second, data: data}, nil
}

func (b *binding) str(k string) string { s, _ := b.data[k].(string); return s }

// wait polls the load balancer until it is ACTIVE, bounded by
// lb_status_timeout: Octavia refuses changes to a load balancer in a
// PENDING_* state.
func (b *binding) wait(ctx context.Context, id string) (*loadbalancers.LoadBalancer, error) {
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	last := "unknown"
	for {
		lb, err := loadbalancers.Get(ctx, b.lb, id).Extract()
		if err == nil {
			last = lb.ProvisioningStatus
			switch last {
			case "ACTIVE":
				return lb, nil
			case "ERROR":
				return nil, fmt.Errorf("load balancer %s went into ERROR", id)
			}
		} else if ctx.Err() == nil && !gophercloud.ResponseCodeIs(err, 503) {
			return nil, fmt.Errorf("load balancer %s: %w", id, err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("load balancer %s is still %s after lb_status_timeout (%s)", id, last, b.timeout)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Attach adopts the load balancer the policy names or creates one with a
// listener, pool and health monitor, then adds every node as a member.
func (p *policy) Attach(ctx context.Context, spec sdk.Spec, c sdk.Cluster) (map[string]any, error) {
	b, err := p.open(ctx, spec, c, map[string]any{})
	if err != nil {
		return nil, err
	}
	pr := b.props
	if pr.LoadBalancer != "" {
		lb, err := b.wait(ctx, pr.LoadBalancer)
		if err != nil {
			return nil, fmt.Errorf("The load balancer %s cannot be used: %w", pr.LoadBalancer, err)
		}
		b.data[keyLB], b.data[keyPool], b.data[keyPreexisting], b.data[keyVIP] = lb.ID, pr.Pool.ID, true, lb.VipAddress
		if hm := pr.HealthMonitor.ID; hm != "" {
			b.data[keyHM] = hm
		} else if hm, err := poolMonitor(ctx, b.lb, lb.ID, pr.Pool.ID); err == nil && hm != "" {
			b.data[keyHM] = hm
		}
	} else if err := b.create(ctx, c); err != nil {
		// A load balancer half made (its listener refused, a wait that
		// timed out) goes again, with its children.
		if terr := b.teardown(ctx); terr != nil {
			err = errors.Join(err, terr)
		}
		return nil, fmt.Errorf("Failed in creating loadbalancer: %w", err)
	}
	plan, err := decide.Decide(decide.Request{Phase: decide.After, Action: decide.Attach, Nodes: p.nodes(ctx, c, pr)})
	if err != nil {
		return nil, err
	}
	if failed := b.add(ctx, plan.Join); len(failed) > 0 {
		// What attach created goes again: a binding that failed leaves
		// nothing behind.
		_ = b.teardown(ctx)
		return nil, fmt.Errorf("%s %s", ReasonAdd, failed)
	}
	b.data[sdk.BindingClusterData] = map[string]any{"loadbalancers": map[string]any{keyVIP: b.data[keyVIP]}}
	return b.data, nil
}

// create makes the load balancer, its listener, pool and health monitor,
// one at a time: each waits for the load balancer to be ACTIVE again.
func (b *binding) create(ctx context.Context, c sdk.Cluster) error {
	pr := b.props
	up := func(v bool) *bool { return &v }
	lb, err := loadbalancers.Create(ctx, b.lb, loadbalancers.CreateOpts{Name: "grove-" + c.Name,
		VipSubnetID: pr.VIP.Subnet, VipNetworkID: pr.VIP.Network, VipAddress: pr.VIP.Address, AdminStateUp: up(true),
		AvailabilityZone: pr.AvailabilityZone, FlavorID: pr.FlavorID}).Extract()
	if err != nil {
		return err
	}
	b.data[keyLB], b.data[keyPreexisting] = lb.ID, false
	if lb, err = b.wait(ctx, lb.ID); err != nil {
		return err
	}
	b.data[keyVIP] = lb.VipAddress
	limit := pr.VIP.ConnectionLimit
	ls, err := listeners.Create(ctx, b.lb, listeners.CreateOpts{LoadbalancerID: lb.ID, Protocol: listeners.Protocol(pr.VIP.Protocol),
		ProtocolPort: pr.VIP.ProtocolPort, ConnLimit: &limit, AdminStateUp: up(pr.VIP.AdminStateUp)}).Extract()
	if err != nil {
		return err
	}
	b.data[keyListener] = ls.ID
	if _, err := b.wait(ctx, lb.ID); err != nil {
		return err
	}
	opts := pools.CreateOpts{ListenerID: ls.ID, Protocol: pools.Protocol(pr.Pool.Protocol), LBMethod: pools.LBMethod(pr.Pool.LBMethod),
		AdminStateUp: up(pr.Pool.AdminStateUp)}
	if sp := pr.Pool.SessionPersistence; sp.Type != "" && sp.Type != "NONE" {
		opts.Persistence = &pools.SessionPersistence{Type: sp.Type, CookieName: sp.CookieName}
	}
	pool, err := pools.Create(ctx, b.lb, opts).Extract()
	if err != nil {
		return err
	}
	b.data[keyPool] = pool.ID
	if _, err := b.wait(ctx, lb.ID); err != nil {
		return err
	}
	hm := pr.HealthMonitor
	mo := monitors.CreateOpts{PoolID: pool.ID, Type: hm.Type, Delay: hm.Delay, Timeout: hm.Timeout, MaxRetries: hm.MaxRetries,
		AdminStateUp: up(hm.AdminStateUp)}
	if hm.Type == "HTTP" || hm.Type == "HTTPS" {
		mo.HTTPMethod, mo.URLPath, mo.ExpectedCodes = hm.HTTPMethod, hm.URLPath, hm.ExpectedCodes
	}
	mon, err := monitors.Create(ctx, b.lb, mo).Extract()
	if err != nil {
		return err
	}
	b.data[keyHM] = mon.ID
	_, err = b.wait(ctx, lb.ID)
	return err
}

// Statuses is Octavia's status tree as Octavia sends it. gophercloud's
// loadbalancers.GetStatuses reads a pool's monitor under "healthmonitor";
// Octavia sends "health_monitor", so gophercloud's comes back empty and
// Grove reads the tree itself (both keys).
type Statuses struct {
	LoadBalancer struct {
		ID        string `json:"id"`
		Listeners []struct {
			ID    string `json:"id"`
			Pools []struct {
				ID            string `json:"id"`
				HealthMonitor *struct {
					ID string `json:"id"`
				} `json:"health_monitor"`
				HealthMonitorOld *struct {
					ID string `json:"id"`
				} `json:"healthmonitor"`
				Members []struct {
					ID      string `json:"id"`
					Address string `json:"address"`
				} `json:"members"`
			} `json:"pools"`
		} `json:"listeners"`
	} `json:"loadbalancer"`
}

// ParseStatuses reads a status tree's body.
func ParseStatuses(body []byte) (Statuses, error) {
	var doc struct {
		Statuses Statuses `json:"statuses"`
	}
	err := json.Unmarshal(body, &doc)
	return doc.Statuses, err
}

// Monitor is the health monitor of pool in the tree, "" when it has none.
func (s Statuses) Monitor(pool string) string {
	for _, l := range s.LoadBalancer.Listeners {
		for _, p := range l.Pools {
			if p.ID != pool {
				continue
			}
			if p.HealthMonitor != nil {
				return p.HealthMonitor.ID
			}
			if p.HealthMonitorOld != nil {
				return p.HealthMonitorOld.ID
			}
		}
	}
	return ""
}

// poolMonitor finds the health monitor of an adopted load balancer's pool
// in its status tree.
func poolMonitor(ctx context.Context, c *gophercloud.ServiceClient, lb, pool string) (string, error) {
	var body json.RawMessage
	_, err := c.Get(ctx, c.ServiceURL("lbaas", "loadbalancers", lb, "status"), &body, nil)
	if err != nil {
		return "", err
	}
	s, err := ParseStatuses(body)
	if err != nil {
		return "", err
	}
	return s.Monitor(pool), nil
}

// nodes are the cluster's nodes with the addresses members get, on the
// pool's protocol port: the IP a Nova server has on the pool's subnet, else
// its first. The node's data has the server's addresses as Nova lists
// them; when it has none (a cloud whose Neutron leaves a server's
// addresses empty, as Nova's test fixture does), the server's interfaces
// are asked, with the Nova driver's compute client.
func (p *policy) nodes(ctx context.Context, c sdk.Cluster, pr Properties) []decide.Node {
	out := make([]decide.Node, len(c.Nodes))
	for i, n := range c.Nodes {
		ip, _ := n.Data["address"].(string)
		if ip == "" {
			ip = p.interfaceIP(ctx, c.Profile, n, pr.Pool.Subnet)
		}
		addr := ""
		if ip != "" {
			addr = decide.Address(map[string]any{"address": ip}, pr.Pool.ProtocolPort)
		}
		out[i] = decide.Node{ID: n.ID, Status: n.Status, Address: addr, CreatedAt: n.CreatedAt, ProfileCreatedAt: n.ProfileCreatedAt, Tainted: n.Tainted}
	}
	return out
}

// interfaceIP is a server's fixed IP on subnet (else its first), from
// its interfaces; "" when it has none or Nova cannot say.
func (p *policy) interfaceIP(ctx context.Context, profile sdk.Spec, n sdk.ClusterNode, subnet string) string {
	server, _ := n.Data["server_id"].(string)
	if server == "" {
		return ""
	}
	compute, err := p.nova.Compute(ctx, profile)
	if err != nil {
		return ""
	}
	pages, err := attachinterfaces.List(compute, server).AllPages(ctx)
	if err != nil {
		return ""
	}
	ifs, err := attachinterfaces.ExtractInterfaces(pages)
	if err != nil {
		return ""
	}
	first := ""
	for _, i := range ifs {
		for _, f := range i.FixedIPs {
			if f.SubnetID == subnet {
				return f.IPAddress
			}
			if first == "" {
				first = f.IPAddress
			}
		}
	}
	return first
}

type member struct{ id, node, addr string }

// members are the pool's members the policy added (named by prefix).
func (b *binding) members(ctx context.Context) ([]member, error) {
	pages, err := pools.ListMembers(b.lb, b.str(keyPool), pools.ListMembersOpts{}).AllPages(ctx)
	if err != nil {
		return nil, err
	}
	ms, err := pools.ExtractMembers(pages)
	if err != nil {
		return nil, err
	}
	var out []member
	for _, m := range ms {
		if node, ok := strings.CutPrefix(m.Name, b.prefix); ok {
			out = append(out, member{id: m.ID, node: node, addr: net.JoinHostPort(m.Address, strconv.Itoa(m.ProtocolPort))})
		}
	}
	return out, nil
}

// add creates a member per node, each waiting for the load balancer;
// it returns the nodes that failed, with why.
func (b *binding) add(ctx context.Context, ns []decide.Node) decide.Failures {
	var failed decide.Failures
	for _, n := range ns {
		host, _, _ := net.SplitHostPort(n.Address)
		_, err := pools.CreateMember(ctx, b.lb, b.str(keyPool), pools.CreateMemberOpts{Name: b.prefix + n.ID, Address: host,
			ProtocolPort: b.props.Pool.ProtocolPort, SubnetID: b.props.Pool.Subnet}).Extract()
		if err == nil {
			_, err = b.wait(ctx, b.str(keyLB))
		}
		if err != nil {
			failed = append(failed, decide.Failure{Node: n.ID, Err: err})
		}
	}
	return failed
}

// remove deletes the members of the given nodes.
func (b *binding) remove(ctx context.Context, ms []member, nodes []string) decide.Failures {
	var failed decide.Failures
	for _, id := range nodes {
		for _, m := range ms {
			if m.node != id {
				continue
			}
			err := pools.DeleteMember(ctx, b.lb, b.str(keyPool), m.id).ExtractErr()
			if err != nil && !gophercloud.ResponseCodeIs(err, 404) {
				failed = append(failed, decide.Failure{Node: id, Err: err})
				continue
			}
			if _, err := b.wait(ctx, b.str(keyLB)); err != nil {
				failed = append(failed, decide.Failure{Node: id, Err: err})
			}
		}
	}
	return failed
}

// teardown deletes what the policy created (the load balancer, cascading
// to its children) or, for an adopted one, only its members.
func (b *binding) teardown(ctx context.Context) error {
	lb := b.str(keyLB)
	if lb == "" {
		return nil
	}
	if pre, _ := b.data[keyPreexisting].(bool); pre {
		ms, err := b.members(ctx)
		if err != nil {
			return err
		}
		all := make([]string, len(ms))
		for i, m := range ms {
			all[i] = m.node
		}
		if failed := b.remove(ctx, ms, all); len(failed) > 0 {
			return fmt.Errorf("%s %s", ReasonRemove, failed)
		}
		return nil
	}
	if err := loadbalancers.Delete(ctx, b.lb, lb, loadbalancers.DeleteOpts{Cascade: true}).ExtractErr(); err != nil && !gophercloud.ResponseCodeIs(err, 404) {
		return fmt.Errorf("Failed in deleting loadbalancer %s: %w", lb, err)
	}
	ctx, cancel := context.WithTimeout(ctx, b.timeout)
	defer cancel()
	for {
		_, err := loadbalancers.Get(ctx, b.lb, lb).Extract()
		if gophercloud.ResponseCodeIs(err, 404) {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("load balancer %s is not deleted after lb_status_timeout (%s)", lb, b.timeout)
		case <-time.After(250 * time.Millisecond):
		}
	}
}

// Detach deletes what attach created, or only the members of an adopted
// load balancer.
func (p *policy) Detach(ctx context.Context, spec sdk.Spec, c sdk.Cluster, data map[string]any) error {
	b, err := p.open(ctx, spec, c, data)
	if err != nil {
		return err
	}
	return b.teardown(ctx)
}

// Check removes the members of leaving nodes (BEFORE) and adds those of
// nodes that came (AFTER); a recreated node's old member is removed
// before its new one is added. A member that cannot be changed fails the
// action with Senlin's reason.
func (p *policy) Check(ctx context.Context, req sdk.CheckRequest) (sdk.CheckResult, error) {
	b, err := p.open(ctx, req.Policy, req.Cluster, req.BindingData)
	if err != nil {
		return sdk.CheckResult{Refuse: err.Error()}, nil
	}
	r, err := request(req)
	if err != nil {
		return sdk.CheckResult{Refuse: err.Error()}, nil
	}
	r.Nodes = p.nodes(ctx, req.Cluster, b.props)
	ms, err := b.members(ctx)
	if err != nil {
		return sdk.CheckResult{Refuse: fmt.Sprintf("The members of pool %s cannot be listed: %v.", b.str(keyPool), err)}, nil
	}
	for _, m := range ms {
		r.Members = append(r.Members, decide.Member{Node: m.node, Address: m.addr, Ready: true})
	}
	plan, err := decide.Decide(r)
	if err != nil {
		return sdk.CheckResult{Refuse: err.Error()}, nil
	}
	var res sdk.CheckResult
	if plan.Victims != nil {
		res.Data = map[string]any{sdk.DataDeletion: victimsData(req.Action, plan.Victims)}
	}
	if failed := b.remove(ctx, ms, plan.Leave); len(failed) > 0 {
		return failed.Refuse(ReasonRemove, res.Data), nil
	}
	re := make([]string, len(plan.Readdress))
	for i, n := range plan.Readdress {
		re[i] = n.ID
	}
	if failed := b.remove(ctx, ms, re); len(failed) > 0 {
		return failed.Refuse(ReasonRemove, res.Data), nil
	}
	if failed := b.add(ctx, append(plan.Join, plan.Readdress...)); len(failed) > 0 {
		return failed.Refuse(ReasonAdd, res.Data), nil
	}
	return res, nil
}

var errNoBinding = errors.New("The binding records no load balancer pool: detach and attach the policy again.")

// request reads the decision's inputs from a check request; the same
// reading as grove.policy.haproxy's.
func request(req sdk.CheckRequest) (decide.Request, error) {
	if s, _ := req.BindingData[keyPool].(string); s == "" {
		return decide.Request{}, errNoBinding
	}
	return decide.FromCheck(req)
}

func victimsData(a sdk.Action, victims []string) map[string]any {
	return decide.VictimsData(a, victims)
}
