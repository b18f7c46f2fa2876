// Package container is the container.docker profile driver: each node is a
// container on a Docker Engine API endpoint (a Docker engine, or Podman's
// Docker-compatible service), driven with the moby client. Several endpoints
// can be configured; each is a host Grove places nodes on.
package container

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/grovehq/grove/plugins/builtin/internal/fanout"
	"github.com/grovehq/grove/plugins/builtin/internal/props"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is the profile type.
const TypeName = "container.docker"

// Labels Grove puts on its containers.
const (
	labelManaged = "grove.managed"
	labelNode    = "grove.node"
	labelCluster = "grove.cluster"
	labelAttempt = "grove.attempt"    // one create call's container
	labelCPU     = "grove.cpu"        // cores reserved, for a host's load
	labelMemory  = "grove.memory_mib" // MiB reserved, for a host's load
)

// Bounds of the cpu and memory properties.
const (
	maxCPU       = 4096    // cores
	maxMemoryMiB = 1 << 30 // 1 PiB
)

// Type returns the profile type registration.
func Type() sdk.ProfileType {
	d := &Driver{}
	return sdk.ProfileType{
		Type:     TypeName,
		Versions: []string{"1.0"},
		Description: "Each node is a container on a Docker Engine API endpoint (Docker or Podman). Host networking on 127.0.0.1 by default: " +
			"the engine allocates a port per node, passed as GROVE_NODE_PORT and PORT.",
		Schema: schema.Schema{
			"image":   {Type: schema.String, Required: true, Updatable: true, Description: "The image; a change replaces the node's container."},
			"command": {Type: schema.List, Updatable: true, Elem: &schema.Property{Type: schema.String}, Description: "Command and arguments (default: the image's)."},
			"env":     {Type: schema.Map, Updatable: true, Sensitive: true, Elem: &schema.Property{Type: schema.String}, Description: "Environment variables. The values are sensitive: the API shows them as (sensitive) and the store keeps them encrypted."},
			"labels":  {Type: schema.Map, Updatable: true, Elem: &schema.Property{Type: schema.String}, Description: "Container labels."},
			"ports": {Type: schema.List, Elem: &schema.Property{Type: schema.Integer, Constraints: []schema.Constraint{schema.Range(schema.F(1), schema.F(65535))}}, Description: "The container port the app listens on. With host networking one port, " +
				"and the app must listen on $PORT (the port allocated for the node on 127.0.0.1)."},
			// The upper bounds keep cpu*1e9 (nano-CPUs) and memory<<20 (bytes)
			// inside int64.
			"cpu":     {Type: schema.Number, Updatable: true, Description: "CPU limit in cores; updated in place.", Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(maxCPU))}},
			"memory":  {Type: schema.Integer, Updatable: true, Description: "Memory limit in MiB; updated in place.", Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(maxMemoryMiB))}},
			"volumes": {Type: schema.List, Updatable: true, Elem: &schema.Property{Type: schema.String}, Description: "Bind mounts, host:container[:ro]."},
			"network": {Type: schema.String, Default: "host", Description: "host (default) or none. Grove never creates bridge networks.",
				Constraints: []schema.Constraint{schema.AllowedValues("host", "none")}},
			"stop_timeout": {Type: schema.Integer, Updatable: true, Default: int64(10), Description: "Seconds between SIGTERM and SIGKILL.", Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(3600))}},
		},
		Operations:     []string{"RECREATE"},
		NodeOperations: nodeOperations(),
		NeedsPort:      true,
		Driver:         d,
		Hosts:          d.Hosts,
		Validate: func(_ context.Context, p sdk.Spec) schema.Diagnostics {
			var ds schema.Diagnostics
			if ports, _ := p.Properties["ports"].([]any); len(ports) > 1 && p.Properties["network"] == "host" {
				ds = append(ds, schema.Diagnostic{Field: "properties.ports", Message: "host networking gives a node one port; list at most one."})
			}
			for i, v := range props.Strings(p.Properties["volumes"]) {
				if parts := strings.Split(v, ":"); len(parts) < 2 || len(parts) > 3 || !strings.HasPrefix(parts[0], "/") {
					ds = append(ds, schema.Diagnostic{Field: fmt.Sprintf("properties.volumes[%d]", i), Message: fmt.Sprintf("%q is not /host/path:/container/path[:ro].", v)})
				}
			}
			return ds
		},
	}
}

// Driver implements sdk.Profile against one or more engines.
type Driver struct {
	mu      sync.Mutex
	clients map[string]*client.Client
	// placing counts creations under way per host: containers not yet
	// listed by the engine still count towards its load, so a batch
	// spreads across hosts instead of piling onto the one that looked idle.
	placing map[string]int
}

type endpoint struct{ name, addr string }

// endpoints reads the engines from the plugin config ("docker_hosts":
// "a=unix:///x.sock,b=tcp://127.0.0.1:2375"), GROVE_DOCKER_HOSTS, or
// DOCKER_HOST (one host named "default").
func endpoints() []endpoint {
	spec := os.Getenv("GROVE_DOCKER_HOSTS")
	var cfg map[string]any
	if json.Unmarshal([]byte(os.Getenv("GROVE_PLUGIN_CONFIG")), &cfg) == nil {
		if s, ok := cfg["docker_hosts"].(string); ok && s != "" {
			spec = s
		}
	}
	var out []endpoint
	for _, part := range strings.Split(spec, ",") {
		if name, addr, ok := strings.Cut(strings.TrimSpace(part), "="); ok && name != "" && addr != "" {
			out = append(out, endpoint{name, addr})
		}
	}
	if len(out) == 0 {
		addr := os.Getenv("DOCKER_HOST")
		if addr == "" {
			addr = "unix:///var/run/docker.sock"
		}
		out = []endpoint{{"default", addr}}
	}
	return out
}

// HostNames are the names of the engines the driver places containers on,
// in their configured order: the hosts a placement policy chooses among.
func HostNames() []string {
	eps := endpoints()
	out := make([]string, len(eps))
	for i, e := range eps {
		out[i] = e.name
	}
	return out
}

func (d *Driver) client(host string) (*client.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.clients == nil {
		d.clients = map[string]*client.Client{}
	}
	if c, ok := d.clients[host]; ok {
		return c, nil
	}
	for _, e := range endpoints() {
		if e.name == host {
			c, err := client.New(client.WithHost(e.addr))
			if err != nil {
				return nil, fmt.Errorf("engine %s (%s): %w", host, e.addr, err)
			}
			d.clients[host] = c
			return c, nil
		}
	}
	return nil, fmt.Errorf("no engine endpoint named %q is configured", host)
}

// state is what the engine stores for each node.
type state struct {
	Host      string `json:"host"`
	Container string `json:"container"`
}

func stateOf(n sdk.Node) state {
	var st state
	_ = json.Unmarshal(n.State, &st)
	if st.Container == "" {
		st.Container = containerName(n)
	}
	return st
}

func containerName(n sdk.Node) string { return "grove-" + n.ID }

// running lists Grove's running containers on an engine: its load.
func (d *Driver) running(ctx context.Context, host string) ([]container.Summary, error) {
	c, err := d.client(host)
	if err != nil {
		return nil, err
	}
	opts := client.ContainerListOptions{Filters: client.Filters{}.Add("label", labelManaged+"=true")}
	res, err := c.ContainerList(ctx, opts)
	if err != nil && ctx.Err() == nil {
		// Podman's list fails now and then while a container is being
		// removed; once more is enough.
		res, err = c.ContainerList(ctx, opts)
	}
	if err != nil {
		return nil, engineError(host, err)
	}
	return res.Items, nil
}

// Hosts reports each configured engine: what it is and what Grove's
// running containers reserve on it. An engine that does not answer is
// listed with the reason.
func (d *Driver) Hosts(ctx context.Context) ([]sdk.Host, error) {
	eps := endpoints()
	out := make([]sdk.Host, len(eps))
	var wg sync.WaitGroup
	for i, e := range eps {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = d.host(ctx, e)
		}()
	}
	wg.Wait()
	return out, nil
}

func (d *Driver) host(ctx context.Context, e endpoint) sdk.Host {
	h := sdk.Host{Name: e.name, Attributes: map[string]string{"address": e.addr}}
	c, err := d.client(e.name)
	if err != nil {
		h.Err = err.Error()
		return h
	}
	info, err := c.Info(ctx, client.InfoOptions{})
	if err != nil {
		h.Err = engineError(e.name, err).Error()
		return h
	}
	h.Attributes["server_version"] = info.Info.ServerVersion
	h.Attributes["os"] = info.Info.OperatingSystem
	h.Attributes["ncpu"] = strconv.Itoa(info.Info.NCPU)
	h.Attributes["memory_mib"] = strconv.FormatInt(info.Info.MemTotal>>20, 10)
	items, err := d.running(ctx, e.name)
	if err != nil {
		h.Err = err.Error()
		return h
	}
	load := map[string]float64{"containers": float64(len(items)), "cpu": 0, "memory_mib": 0,
		"engine_containers_running": float64(info.Info.ContainersRunning)}
	for _, s := range items {
		cpu, _ := strconv.ParseFloat(s.Labels[labelCPU], 64)
		mem, _ := strconv.ParseFloat(s.Labels[labelMemory], 64)
		load["cpu"] += cpu
		load["memory_mib"] += mem
	}
	h.Load = load
	return h
}

// place picks a node's host: its placement data, its previous host, or the
// least loaded engine.
func (d *Driver) place(ctx context.Context, n sdk.Node) (string, error) {
	chosen := ""
	if p, ok := n.Data["placement"].(map[string]any); ok {
		chosen, _ = p["host"].(string)
	}
	if chosen == "" {
		chosen, _ = n.Data["host"].(string)
	}
	if chosen != "" {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.count(chosen)
		return chosen, nil
	}
	eps := endpoints()
	loads := map[string]int{}
	for _, e := range eps {
		if items, err := d.running(ctx, e.name); err == nil {
			loads[e.name] = len(items)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	best, bestLoad := "", -1
	for _, e := range eps {
		l, ok := loads[e.name]
		if !ok {
			continue
		}
		if l += d.placing[e.name]; bestLoad < 0 || l < bestLoad {
			best, bestLoad = e.name, l
		}
	}
	if best == "" {
		return "", fmt.Errorf("no container engine answers (tried %d endpoints); start one (`make engine-up`) or set DOCKER_HOST", len(eps))
	}
	d.count(best)
	return best, nil
}

// count starts a creation on host; d.mu is held.
func (d *Driver) count(host string) {
	if d.placing == nil {
		d.placing = map[string]int{}
	}
	d.placing[host]++
}

// placed ends a creation counted by place.
func (d *Driver) placed(host string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.placing[host]--
}

func engineError(host string, err error) error {
	msg := err.Error()
	switch {
	case cerrdefs.IsNotFound(err) && strings.Contains(strings.ToLower(msg), "image"):
		return fmt.Errorf("image not found on engine %s: %s", host, msg)
	case strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such file or directory") || strings.Contains(msg, "Cannot connect"):
		return sdk.Retryable(fmt.Errorf("engine %s does not answer: %s", host, msg))
	}
	return fmt.Errorf("engine %s: %s", host, msg)
}

func nodePort(n sdk.Node) int {
	switch v := n.Data["port"].(type) {
	case float64:
		return int(v)
	case int:
		return v
	case int64:
		return int(v)
	}
	return 0
}

func (d *Driver) Create(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	// Engines take creations in parallel, within reason.
	return fanout.Each(nodes, 8, func(n sdk.Node) sdk.Result { return d.create(ctx, p, n) })
}

// create is idempotent per node id: the container is named after the node,
// and a running container of that name is the node's.
func (d *Driver) create(ctx context.Context, p sdk.Spec, n sdk.Node) sdk.Result {
	if err := ctx.Err(); err != nil {
		return sdk.Result{ID: n.ID, Err: sdk.Retryable(err)}
	}
	// A placement policy that found no host for the node (hard
	// anti-affinity with every engine taken) says why; no retry helps.
	if p, ok := n.Data["placement"].(map[string]any); ok {
		if refused, _ := p["refused"].(string); refused != "" {
			return sdk.Result{ID: n.ID, Err: errors.New(refused)}
		}
	}
	host, err := d.place(ctx, n)
	if err != nil {
		return sdk.Result{ID: n.ID, Err: sdk.Retryable(err)}
	}
	defer d.placed(host)
	c, err := d.client(host)
	if err != nil {
		return sdk.Result{ID: n.ID, Err: err}
	}
	name := containerName(n)
	ins, err := c.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
	if err == nil && ins.Container.State != nil && ins.Container.State.Running && ins.Container.Config != nil && ins.Container.Config.Image == p.Properties["image"] {
		return d.result(n, host, ins.Container.ID)
	}
	// Anything else under the node's name is a leftover: stopped, of an old
	// image, or broken by an earlier create cut short (Podman then keeps a
	// record it cannot inspect).
	if err == nil || !isGone(err) {
		if err := forceRemove(ctx, c, name); err != nil {
			return sdk.Result{ID: n.ID, Err: engineError(host, err)}
		}
	}
	port := nodePort(n)
	if port > 0 && p.Properties["network"] == "host" {
		if l, err := net.Listen("tcp", fmt.Sprintf("127.0.0.1:%d", port)); err != nil {
			return sdk.Result{ID: n.ID, Err: fmt.Errorf("port %d already in use on 127.0.0.1", port)}
		} else {
			l.Close()
		}
	}
	env := []string{}
	if m, ok := p.Properties["env"].(map[string]any); ok {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			env = append(env, k+"="+fmt.Sprint(m[k]))
		}
	}
	env = append(env, "GROVE_NODE_PORT="+strconv.Itoa(port), "PORT="+strconv.Itoa(port), "GROVE_NODE_NAME="+n.Name,
		"GROVE_NODE_ID="+n.ID, "GROVE_NODE_INDEX="+strconv.Itoa(n.Index), "GROVE_CLUSTER_NAME="+n.ClusterName)
	labels := map[string]string{labelManaged: "true", labelNode: n.ID, labelCluster: n.ClusterID}
	if cpu, ok := p.Properties["cpu"].(float64); ok && cpu > 0 {
		labels[labelCPU] = strconv.FormatFloat(cpu, 'f', -1, 64)
	}
	if mem := props.Int(p.Properties["memory"], 0); mem > 0 {
		labels[labelMemory] = strconv.Itoa(mem)
	}
	if m, ok := p.Properties["labels"].(map[string]any); ok {
		for k, v := range m {
			labels[k] = fmt.Sprint(v)
		}
	}
	stop := props.Int(p.Properties["stop_timeout"], 10)
	cfg := &container.Config{Image: fmt.Sprint(p.Properties["image"]), Env: env, Labels: labels, StopTimeout: &stop}
	if cmd := props.Strings(p.Properties["command"]); len(cmd) > 0 {
		cfg.Cmd = cmd
	}
	hc := &container.HostConfig{NetworkMode: container.NetworkMode(fmt.Sprint(p.Properties["network"])), Binds: props.Strings(p.Properties["volumes"]),
		Resources: resources(p)}
	// Each attempt is labelled, so the sweep below can tell this attempt's
	// container from a retry's.
	attempt := strconv.FormatInt(time.Now().UnixNano(), 36) + "-" + strconv.Itoa(rand.Int())
	cfg.Labels[labelAttempt] = attempt
	created, err := c.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: hc})
	if err != nil && ctx.Err() != nil {
		// The engine may finish a creation whose caller has gone; that
		// container would outlive a delete that ran meanwhile.
		go d.sweepCutCreate(c, name, attempt)
		return sdk.Result{ID: n.ID, Err: sdk.Retryable(fmt.Errorf("create container %s: %w", name, ctx.Err()))}
	}
	if err != nil {
		if cerrdefs.IsNotFound(err) || strings.Contains(err.Error(), "image not known") || strings.Contains(err.Error(), "No such image") {
			return sdk.Result{ID: n.ID, Err: fmt.Errorf("image not found: %s (engine %s); build or load it there first", cfg.Image, host)}
		}
		return sdk.Result{ID: n.ID, Err: engineError(host, err)}
	}
	if _, err := c.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
		if _, rerr := c.ContainerRemove(context.WithoutCancel(ctx), created.ID, client.ContainerRemoveOptions{Force: true}); rerr != nil && !cerrdefs.IsNotFound(rerr) {
			go d.sweepCutCreate(c, name, attempt)
		}
		if ctx.Err() != nil {
			return sdk.Result{ID: n.ID, Err: sdk.Retryable(fmt.Errorf("start container %s: %w", name, ctx.Err()))}
		}
		msg := err.Error()
		if strings.Contains(msg, "address already in use") {
			return sdk.Result{ID: n.ID, Err: fmt.Errorf("port %d already in use", port)}
		}
		return sdk.Result{ID: n.ID, Err: engineError(host, err)}
	}
	return d.result(n, host, created.ID)
}

// sweepCutCreate removes the container a cut-short create may still leave
// behind: the one carrying this attempt's label, if it shows up.
func (d *Driver) sweepCutCreate(c *client.Client, name, attempt string) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		ins, err := c.ContainerInspect(ctx, name, client.ContainerInspectOptions{})
		switch {
		case err == nil && (ins.Container.Config == nil || ins.Container.Config.Labels[labelAttempt] != attempt):
			return // a later attempt's container
		case err == nil || !isGone(err):
			// This attempt's container, or a record broken by the cut
			// (no later attempt succeeded, or inspect would work). The
			// engine may refuse while it still finishes; try again then.
			if forceRemove(ctx, c, name) == nil {
				return
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}

// isGone says an engine error means the container does not exist.
func isGone(err error) bool {
	return cerrdefs.IsNotFound(err) && !strings.Contains(err.Error(), "from store")
}

// forceRemove removes a container, running or not; a missing one is gone.
func forceRemove(ctx context.Context, c *client.Client, ref string) error {
	_, err := c.ContainerRemove(ctx, ref, client.ContainerRemoveOptions{Force: true})
	if err != nil && !isGone(err) && !strings.Contains(err.Error(), "no such container") {
		return err
	}
	return nil
}

func resources(p sdk.Spec) container.Resources {
	var r container.Resources
	if cpu, ok := p.Properties["cpu"].(float64); ok && cpu > 0 {
		r.NanoCPUs = int64(cpu * 1e9)
	}
	if mem := props.Int(p.Properties["memory"], 0); mem > 0 {
		r.Memory = int64(mem) << 20
	}
	return r
}

func (d *Driver) result(n sdk.Node, host, id string) sdk.Result {
	b, _ := json.Marshal(state{Host: host, Container: id})
	data := map[string]any{"host": host, "container": containerName(n)}
	if port := nodePort(n); port > 0 {
		data["port"] = port
		data["address"] = fmt.Sprintf("127.0.0.1:%d", port)
	}
	return sdk.Result{ID: n.ID, PhysicalID: id[:min(12, len(id))], State: b, Data: data, Healthy: true}
}

// Delete stops and removes each node's container; a missing one is gone.
func (d *Driver) Delete(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	var wg sync.WaitGroup
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i] = sdk.Result{ID: n.ID, Err: d.remove(ctx, p, n)}
		}()
	}
	wg.Wait()
	return out
}

func (d *Driver) remove(ctx context.Context, p sdk.Spec, n sdk.Node) error {
	st := stateOf(n)
	if st.Host == "" {
		st.Host, _ = n.Data["host"].(string)
	}
	hosts := []string{st.Host}
	if st.Host == "" {
		// Never recorded: look on every engine (a create cut short).
		hosts = nil
		for _, e := range endpoints() {
			hosts = append(hosts, e.name)
		}
	}
	for _, h := range hosts {
		c, err := d.client(h)
		if err != nil {
			return err
		}
		for _, ref := range []string{st.Container, containerName(n)} {
			// A graceful stop first; whatever it says (not running, broken),
			// the forced removal decides.
			timeout := props.Int(p.Properties["stop_timeout"], 10)
			_, _ = c.ContainerStop(ctx, ref, client.ContainerStopOptions{Timeout: &timeout})
			if err := forceRemove(ctx, c, ref); err != nil {
				return engineError(h, err)
			}
		}
	}
	return nil
}

// Check reports running, exited (with the exit code) and missing containers.
func (d *Driver) Check(ctx context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		st := stateOf(n)
		r := sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State}
		c, err := d.client(st.Host)
		if err != nil {
			r.Err = err
			out[i] = r
			continue
		}
		ins, err := c.ContainerInspect(ctx, st.Container, client.ContainerInspectOptions{})
		switch {
		case err != nil && cerrdefs.IsNotFound(err):
			r.Reason = "the container is missing"
		case err != nil:
			r.Err = engineError(st.Host, err)
		case ins.Container.State != nil && ins.Container.State.Running:
			r.Healthy, r.Reason = true, "container running"
		case ins.Container.State != nil:
			r.Reason = fmt.Sprintf("container %s with exit code %d", ins.Container.State.Status, ins.Container.State.ExitCode)
			r.Completed = ins.Container.State.ExitCode == 0 && string(ins.Container.State.Status) == "exited"
		default:
			r.Reason = "the container has no state"
		}
		out[i] = r
	}
	return out
}

// inPlace lists the properties a running container can change without
// being replaced.
var inPlace = []string{"cpu", "memory", "stop_timeout"}

// Update changes limits in place; any other change replaces the container on
// the same host, keeping the node's identity.
func (d *Driver) Update(ctx context.Context, old, new sdk.Spec, nodes []sdk.Node) []sdk.Result {
	onlyLimits := true
	for k := range union(old.Properties, new.Properties) {
		if !slices.Contains(inPlace, k) && fmt.Sprint(old.Properties[k]) != fmt.Sprint(new.Properties[k]) {
			onlyLimits = false
		}
	}
	if !onlyLimits {
		return d.recreate(ctx, old, new, nodes)
	}
	out := make([]sdk.Result, len(nodes))
	res := resources(new)
	for i, n := range nodes {
		st := stateOf(n)
		c, err := d.client(st.Host)
		if err == nil {
			_, err = c.ContainerUpdate(ctx, st.Container, client.ContainerUpdateOptions{Resources: &res})
		}
		if err == nil {
			out[i] = sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Healthy: true}
			continue
		}
		// Engines without the update endpoint (Podman 4's Docker API) answer
		// 404 for a container that exists; replace it instead.
		if _, ierr := c.ContainerInspect(ctx, st.Container, client.ContainerInspectOptions{}); ierr == nil {
			out[i] = d.recreate(ctx, old, new, []sdk.Node{n})[0]
			continue
		}
		out[i] = sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: engineError(st.Host, err)}
	}
	return out
}

func union(a, b map[string]any) map[string]bool {
	out := map[string]bool{}
	for k := range a {
		out[k] = true
	}
	for k := range b {
		out[k] = true
	}
	return out
}

// Recover recreates a node's container on its host.
func (d *Driver) Recover(ctx context.Context, p sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	return d.recreate(ctx, p, p, nodes)
}

func (d *Driver) recreate(ctx context.Context, old, new sdk.Spec, nodes []sdk.Node) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		if err := d.remove(ctx, old, n); err != nil {
			out[i] = sdk.Result{ID: n.ID, Err: err}
			continue
		}
		if st := stateOf(n); st.Host != "" {
			if n.Data == nil {
				n.Data = map[string]any{}
			}
			n.Data["host"] = st.Host
		}
		out[i] = d.create(ctx, new, n)
	}
	return out
}
