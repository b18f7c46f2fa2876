package nova

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gophercloud/gophercloud/v2"
	"github.com/gophercloud/gophercloud/v2/openstack"
	"github.com/gophercloud/gophercloud/v2/openstack/config"
	"github.com/gophercloud/gophercloud/v2/openstack/config/clouds"
	"sigs.k8s.io/yaml"

	"github.com/grovehq/grove/plugins/sdk"
)

// Microversion is the compute API microversion of every call: at least
// 2.37, where a server can boot with no network ("none"), and below 2.57,
// where personality files went away, and 2.88, where hypervisors stopped
// reporting their vCPUs and memory. Nova has served it since Queens.
const Microversion = "2.56"

// EnvNames are the agent's environment variables the driver reads: the
// OpenStack client's, as `openstack` and gophercloud read them, plus the
// endpoint and token of a cloud without Keystone (OS_AUTH_TYPE=admin_token,
// OS_ENDPOINT, OS_TOKEN, and OS_NETWORK_ENDPOINT_OVERRIDE for Neutron). The plugin host passes exactly these (and the
// other declared ones) to the built-in plugin.
func EnvNames() []string {
	return []string{"OS_CLOUD", "OS_CLIENT_CONFIG_FILE", "OS_AUTH_TYPE", "OS_AUTH_URL", "OS_ENDPOINT", "OS_TOKEN", "OS_NETWORK_ENDPOINT_OVERRIDE",
		"OS_USERNAME", "OS_USERID", "OS_PASSWORD", "OS_PASSCODE", "OS_PROJECT_ID", "OS_PROJECT_NAME", "OS_TENANT_ID", "OS_TENANT_NAME",
		"OS_DOMAIN_ID", "OS_DOMAIN_NAME", "OS_USER_DOMAIN_ID", "OS_USER_DOMAIN_NAME", "OS_PROJECT_DOMAIN_ID", "OS_PROJECT_DOMAIN_NAME",
		"OS_APPLICATION_CREDENTIAL_ID", "OS_APPLICATION_CREDENTIAL_NAME", "OS_APPLICATION_CREDENTIAL_SECRET", "OS_SYSTEM_SCOPE",
		"OS_REGION_NAME", "OS_INTERFACE"}
}

// Env is what the agent hands the plugin: the variables of EnvNames that
// are set and, when OS_CLIENT_CONFIG_FILE is not, the clouds.yaml the
// agent's user would use, found where the openstack client looks (the
// working directory, ~/.config/openstack, /etc/openstack). The plugin runs
// with neither the agent's working directory nor its HOME.
func Env() map[string]string {
	out := map[string]string{}
	for _, k := range EnvNames() {
		if v := os.Getenv(k); v != "" {
			out[k] = v
		}
	}
	if out["OS_CLIENT_CONFIG_FILE"] == "" {
		if f := findCloudsYAML(); f != "" {
			if abs, err := filepath.Abs(f); err == nil {
				out["OS_CLIENT_CONFIG_FILE"] = abs
			}
		}
	}
	return out
}

// cloudsLocations are where the openstack client (and gophercloud's
// clouds.Parse) look for clouds.yaml, in order.
func cloudsLocations() []string {
	if f := os.Getenv("OS_CLIENT_CONFIG_FILE"); f != "" {
		return []string{f}
	}
	var out []string
	if wd, err := os.Getwd(); err == nil {
		out = append(out, filepath.Join(wd, "clouds.yaml"))
	}
	if x := os.Getenv("XDG_CONFIG_HOME"); x != "" {
		out = append(out, filepath.Join(x, "openstack", "clouds.yaml"))
	} else if h, err := os.UserHomeDir(); err == nil {
		out = append(out, filepath.Join(h, ".config", "openstack", "clouds.yaml"))
	}
	return append(out, "/etc/openstack/clouds.yaml")
}

func findCloudsYAML() string {
	for _, f := range cloudsLocations() {
		if st, err := os.Stat(f); err == nil && !st.IsDir() {
			return f
		}
	}
	return ""
}

// clients are a cloud's service clients. image and network are nil when
// the cloud has no catalog (an endpoint and token): names are then
// resolved through Nova's own proxies.
type clients struct {
	compute *gophercloud.ServiceClient
	image   *gophercloud.ServiceClient
	network *gophercloud.ServiceClient
	// loadBalancer is Octavia's v2 API, nil when the cloud has none; the
	// load-balancing policy uses it.
	loadBalancer *gophercloud.ServiceClient
	// where names the cloud in messages: "cloud grove-nova",
	// "http://127.0.0.1:8774/v2.1/".
	where string
}

// legacy is the compute client without a microversion (2.1), for Nova's
// image and network proxies, which 2.36 removed.
func (c *clients) legacy() *gophercloud.ServiceClient {
	l := *c.compute
	l.Microversion = ""
	return &l
}

// tokenAuth says whether an auth type is an endpoint and a token, with no
// Keystone: keystoneauth's admin_token (token_endpoint is its old name).
func tokenAuth(t string) bool {
	return t == "admin_token" || t == "token_endpoint"
}

// cloudEntry is what the driver reads of a clouds.yaml entry beside
// gophercloud: the endpoint of an admin_token cloud, which gophercloud's
// clouds package does not know.
type cloudEntry struct {
	AuthType string `json:"auth_type"`
	Auth     struct {
		Endpoint string `json:"endpoint"`
		Token    string `json:"token"`
	} `json:"auth"`
	RegionName string `json:"region_name"`
	// Endpoint overrides, openstacksdk's keys: a cloud without a catalog
	// may say where its image and network APIs are.
	ImageEndpoint   string `json:"image_endpoint_override"`
	ComputeEndpoint string `json:"compute_endpoint_override"`
	NetworkEndpoint string `json:"network_endpoint_override"`
	// LoadBalancerEndpoint is Octavia's, for senlin.policy.loadbalance.
	LoadBalancerEndpoint string `json:"load_balancer_endpoint_override"`
	// Regions are openstacksdk's per-region settings: a region's values
	// override the cloud's (an endpoint and token cloud, having no
	// catalog, says each region's endpoint there). A cloud that lists
	// regions has no others.
	Regions []regionEntry `json:"regions"`
}

// regionEntry is one item of a clouds.yaml cloud's regions: a name, or a
// name and the values that differ in that region.
type regionEntry struct {
	Name   string     `json:"name"`
	Values cloudEntry `json:"values"`
}

// UnmarshalJSON reads a region given as its bare name too, as openstacksdk
// does.
func (r *regionEntry) UnmarshalJSON(b []byte) error {
	var name string
	if json.Unmarshal(b, &name) == nil {
		*r = regionEntry{Name: name}
		return nil
	}
	type plain regionEntry
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*r = regionEntry(p)
	return nil
}

// inRegion is the entry as it applies in region: the cloud's settings with
// the region's values over them. A region the entry does not list is an
// error naming it; so is any region other than the cloud's own on an
// endpoint and token cloud that lists none (it has no catalog to find one
// in).
func (e cloudEntry) inRegion(cloud, path, region string) (cloudEntry, error) {
	if region == "" || (len(e.Regions) == 0 && (region == e.RegionName || !tokenAuth(e.AuthType))) {
		return e, nil
	}
	i := slices.IndexFunc(e.Regions, func(r regionEntry) bool { return r.Name == region })
	if i < 0 {
		if len(e.Regions) == 0 {
			return e, noRegionError{fmt.Errorf("cloud %q in %s has no region %q: it is an endpoint and a token, with no catalog to find regions in, and its entry lists no regions "+
				"(add the region under regions:, with its auth.endpoint under values:)", cloud, path, region)}
		}
		return e, noRegionError{fmt.Errorf("cloud %q in %s has no region %q; its regions are %s", cloud, path, region, strings.Join(regionNames(e.Regions), ", "))}
	}
	v := e.Regions[i].Values
	out := e
	out.RegionName = region
	if v.ComputeEndpoint != "" && v.Auth.Endpoint == "" && tokenAuth(e.AuthType) {
		// Without a catalog the compute endpoint is the auth endpoint.
		v.Auth.Endpoint = v.ComputeEndpoint
	}
	for _, f := range []struct {
		dst *string
		src string
	}{{&out.Auth.Endpoint, v.Auth.Endpoint}, {&out.Auth.Token, v.Auth.Token},
		{&out.ImageEndpoint, v.ImageEndpoint}, {&out.NetworkEndpoint, v.NetworkEndpoint}, {&out.LoadBalancerEndpoint, v.LoadBalancerEndpoint}} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	return out, nil
}

// readCloud reads one cloud's entry from the clouds.yaml found in path.
func readCloud(path, name string) (cloudEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return cloudEntry{}, err
	}
	var doc struct {
		Clouds map[string]cloudEntry `json:"clouds"`
	}
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return cloudEntry{}, fmt.Errorf("%s: %w", path, err)
	}
	e, ok := doc.Clouds[name]
	if !ok {
		return cloudEntry{}, fmt.Errorf("%s has no cloud %q", path, name)
	}
	return e, nil
}

// endpointClients are the clients of a cloud without Keystone: requests
// carry the token to the compute endpoint as given.
func endpointClients(endpoint, token string) (*clients, error) {
	if endpoint == "" || token == "" {
		return nil, errors.New("an admin_token cloud needs both an endpoint (OS_ENDPOINT, or auth.endpoint in clouds.yaml) and a token (OS_TOKEN, or auth.token)")
	}
	if !strings.HasSuffix(endpoint, "/") {
		endpoint += "/"
	}
	pc, err := openstack.NewClient(endpoint)
	if err != nil {
		return nil, fmt.Errorf("endpoint %q: %w", endpoint, err)
	}
	pc.SetToken(token)
	// Type "compute" is what makes gophercloud send the microversion.
	sc := &gophercloud.ServiceClient{ProviderClient: pc, Endpoint: endpoint, ResourceBase: endpoint, Type: "compute", Microversion: Microversion}
	return &clients{compute: sc, where: endpoint}, nil
}

// override is a service client on an endpoint a clouds.yaml names, nil
// when it names none. version is what gophercloud's own constructors add
// to a bare endpoint.
func override(c *clients, endpoint, typ, version string) *gophercloud.ServiceClient {
	if endpoint == "" {
		return nil
	}
	if !strings.HasSuffix(endpoint, "/") {
		endpoint += "/"
	}
	base := endpoint
	if !strings.HasSuffix(strings.TrimSuffix(endpoint, "/"), strings.TrimSuffix(version, "/")) {
		base += version
	}
	return &gophercloud.ServiceClient{ProviderClient: c.compute.ProviderClient, Endpoint: endpoint, ResourceBase: base, Type: typ}
}

// catalogClients logs in through Keystone and takes the compute, image and
// network endpoints from the catalog.
func catalogClients(ctx context.Context, ao gophercloud.AuthOptions, eo gophercloud.EndpointOpts, tlsConfig *tls.Config, where string) (*clients, error) {
	ao.AllowReauth = true // the plugin outlives a token
	var pc *gophercloud.ProviderClient
	var err error
	if tlsConfig != nil {
		pc, err = config.NewProviderClient(ctx, ao, config.WithTLSConfig(tlsConfig))
	} else {
		pc, err = config.NewProviderClient(ctx, ao)
	}
	if err != nil {
		return nil, fmt.Errorf("log in to %s: %w", where, err)
	}
	compute, err := openstack.NewComputeV2(pc, eo)
	if err != nil {
		return nil, fmt.Errorf("%s has no compute endpoint%s: %w", where, inRegion(eo), err)
	}
	compute.Microversion = Microversion
	c := &clients{compute: compute, where: where}
	if img, err := openstack.NewImageV2(pc, eo); err == nil {
		c.image = img
	}
	if net, err := openstack.NewNetworkV2(pc, eo); err == nil {
		c.network = net
	}
	if lb, err := openstack.NewLoadBalancerV2(pc, eo); err == nil {
		c.loadBalancer = lb
	}
	return c, nil
}

func inRegion(eo gophercloud.EndpointOpts) string {
	if eo.Region == "" {
		return ""
	}
	return " in region " + eo.Region
}

// connect returns the clients of a profile's context, made once per
// context and environment. The credentials are, in order: the context's
// cloud or OS_CLOUD in clouds.yaml; OS_AUTH_TYPE=admin_token with
// OS_ENDPOINT and OS_TOKEN; the OS_* variables of a Keystone login.
func (d *Driver) connect(ctx context.Context, cx Context) (*clients, error) {
	key, _ := json.Marshal(cx)
	d.mu.Lock()
	c, ok := d.clients[string(key)]
	d.mu.Unlock()
	if ok {
		return c, nil
	}
	c, err := d.dial(ctx, cx)
	if err != nil {
		if ctx.Err() != nil || isUnreachable(err) {
			return nil, sdk.Retryable(err)
		}
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if prev, ok := d.clients[string(key)]; ok {
		return prev, nil
	}
	d.clients[string(key)] = c
	return c, nil
}

func (d *Driver) dial(ctx context.Context, cx Context) (*clients, error) {
	cloud := cx.Cloud
	if cloud == "" {
		cloud = os.Getenv("OS_CLOUD")
	}
	if cloud != "" {
		path := findCloudsYAML()
		if path == "" {
			return nil, fmt.Errorf("cloud %q: no clouds.yaml found (looked in %s); set OS_CLIENT_CONFIG_FILE", cloud, strings.Join(cloudsLocations(), ", "))
		}
		e, err := readCloud(path, cloud)
		if err != nil {
			return nil, err
		}
		if e, err = e.inRegion(cloud, path, cx.RegionName); err != nil {
			return nil, err
		}
		if tokenAuth(e.AuthType) {
			c, err := endpointClients(e.Auth.Endpoint, e.Auth.Token)
			if err != nil {
				return nil, fmt.Errorf("cloud %q in %s: %w", cloud, path, err)
			}
			c.image = override(c, e.ImageEndpoint, "image", "v2/")
			c.network = override(c, e.NetworkEndpoint, "network", "v2.0/")
			c.loadBalancer = override(c, e.LoadBalancerEndpoint, "load-balancer", "v2/")
			return c, nil
		}
		popts := []clouds.ParseOption{clouds.WithCloudName(cloud), clouds.WithLocations(path)}
		if cx.RegionName != "" {
			popts = append(popts, clouds.WithRegion(cx.RegionName))
		}
		if cx.ProjectID != "" {
			popts = append(popts, clouds.WithProjectID(cx.ProjectID))
		}
		if cx.ProjectName != "" {
			popts = append(popts, clouds.WithProjectName(cx.ProjectName))
		}
		ao, eo, tlsConfig, err := clouds.Parse(popts...)
		if err != nil {
			return nil, fmt.Errorf("cloud %q in %s: %w", cloud, path, err)
		}
		projectScope(&ao, cx)
		return catalogClients(ctx, ao, eo, tlsConfig, "cloud "+cloud)
	}
	if tokenAuth(os.Getenv("OS_AUTH_TYPE")) || (os.Getenv("OS_AUTH_URL") == "" && os.Getenv("OS_ENDPOINT") != "") {
		if r := cx.RegionName; r != "" && r != os.Getenv("OS_REGION_NAME") {
			return nil, noRegionError{fmt.Errorf("the compute endpoint OS_ENDPOINT names has no region %q: an endpoint and a token have no catalog to find regions in; "+
				"use a clouds.yaml cloud that lists its regions (regions:, each with its auth.endpoint under values:)", r)}
		}
		c, err := endpointClients(os.Getenv("OS_ENDPOINT"), os.Getenv("OS_TOKEN"))
		if err != nil {
			return nil, err
		}
		// An endpoint has no catalog to find Neutron in: openstacksdk reads
		// OS_NETWORK_ENDPOINT_OVERRIDE as network_endpoint_override, and so
		// does this form.
		c.network = override(c, os.Getenv("OS_NETWORK_ENDPOINT_OVERRIDE"), "network", "v2.0/")
		return c, nil
	}
	if os.Getenv("OS_AUTH_URL") == "" {
		return nil, errors.New("no OpenStack credentials: set OS_CLOUD (with a clouds.yaml) or the OS_AUTH_URL family of variables in the agent's environment, " +
			"or OS_AUTH_TYPE=admin_token with OS_ENDPOINT and OS_TOKEN; or name a cloud in the profile's context.cloud")
	}
	ao, err := openstack.AuthOptionsFromEnv()
	if err != nil {
		return nil, fmt.Errorf("the OS_* variables: %w", err)
	}
	if cx.ProjectID != "" || cx.ProjectName != "" {
		ao.TenantID, ao.TenantName = cx.ProjectID, cx.ProjectName
	}
	projectScope(&ao, cx)
	eo := gophercloud.EndpointOpts{Region: os.Getenv("OS_REGION_NAME")}
	if cx.RegionName != "" {
		eo.Region = cx.RegionName
	}
	switch os.Getenv("OS_INTERFACE") {
	case "internal", "internalURL":
		eo.Availability = gophercloud.AvailabilityInternal
	case "admin", "adminURL":
		eo.Availability = gophercloud.AvailabilityAdmin
	}
	return catalogClients(ctx, ao, eo, nil, ao.IdentityEndpoint)
}

// projectScope scopes the login to the context's project, when it names
// one.
func projectScope(ao *gophercloud.AuthOptions, cx Context) {
	switch {
	case cx.ProjectID != "":
		ao.Scope = &gophercloud.AuthScope{ProjectID: cx.ProjectID}
	case cx.ProjectName != "":
		ao.Scope = &gophercloud.AuthScope{ProjectName: cx.ProjectName, DomainID: cx.ProjectDomainID, DomainName: cx.ProjectDomainName}
		if ao.Scope.DomainID == "" && ao.Scope.DomainName == "" {
			ao.Scope.DomainID, ao.Scope.DomainName = ao.DomainID, ao.DomainName
		}
	}
}

// isUnreachable says an error is the cloud not answering, which a retry
// may cure.
func isUnreachable(err error) bool {
	msg := err.Error()
	return strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host") ||
		strings.Contains(msg, "timeout") || strings.Contains(msg, "EOF") ||
		gophercloud.ResponseCodeIs(err, 502) || gophercloud.ResponseCodeIs(err, 503) || gophercloud.ResponseCodeIs(err, 504)
}

// apiError words a gophercloud error for a node: Nova's own message when
// it sent one ({"badRequest": {"message": ...}}), retryable when the cloud
// did not answer or ctx was cut.
func apiError(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return sdk.Retryable(fmt.Errorf("%s: %w", what, ctx.Err()))
	}
	var ue gophercloud.ErrUnexpectedResponseCode
	if errors.As(err, &ue) {
		var body map[string]struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(ue.Body, &body) == nil {
			for _, v := range body {
				if v.Message != "" {
					err = novaError{msg: fmt.Sprintf("%s (HTTP %d)", strings.TrimSuffix(v.Message, "."), ue.Actual), ue: ue}
					break
				}
			}
		}
	}
	if isUnreachable(err) || gophercloud.ResponseCodeIs(err, 409) || gophercloud.ResponseCodeIs(err, 429) {
		return sdk.Retryable(fmt.Errorf("%s: %w", what, err))
	}
	return fmt.Errorf("%s: %w", what, err)
}

// novaError shows Nova's message and keeps gophercloud's error in the
// chain, so gophercloud.ResponseCodeIs still sees the status.
type novaError struct {
	msg string
	ue  gophercloud.ErrUnexpectedResponseCode
}

func (e novaError) Error() string { return e.msg }
func (e novaError) Unwrap() error { return e.ue }
