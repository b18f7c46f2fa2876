package container

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strings"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"

	"github.com/grovehq/grove/plugins/sdk"
)

// containerRef is what a container id or name may hold (Docker's name
// rule; ids are hex): anything else is refused before an engine is asked.
var containerRef = regexp.MustCompile(`^[a-zA-Z0-9][a-zA-Z0-9_.-]{0,127}$`)

// Adopt takes over an existing container by its id or name, on any
// configured engine, or on one as "ENGINE/CONTAINER". Its image, command,
// labels, limits, binds and network mode become the profile's properties
// (its environment is not read: it may hold secrets, and the profile's env
// is the caller's to give as overrides); the container itself is left as it
// is, and from then on is checked, operated on and deleted as the node's.
func (d *Driver) Adopt(ctx context.Context, req sdk.AdoptRequest) (sdk.Adoption, error) {
	if req.Snapshot {
		return sdk.Adoption{}, errors.New("snapshot: container.docker does not commit a container to an image on adoption; commit it yourself (docker commit) and give the image as an override")
	}
	host, ref, scoped := strings.Cut(req.Identity, "/")
	if !scoped {
		host, ref = "", req.Identity
	}
	if !containerRef.MatchString(ref) {
		return sdk.Adoption{}, fmt.Errorf("identity must be a container id or name, optionally after its engine as ENGINE/CONTAINER, got %q", req.Identity)
	}
	if scoped && !d.known(host) {
		return sdk.Adoption{}, fmt.Errorf("no engine endpoint named %q is configured", host)
	}
	var found []string
	var ins container.InspectResponse
	for _, e := range endpoints() {
		if scoped && e.name != host {
			continue
		}
		c, err := d.client(e.name)
		if err != nil {
			return sdk.Adoption{}, err
		}
		res, err := c.ContainerInspect(ctx, ref, client.ContainerInspectOptions{})
		if cerrdefs.IsNotFound(err) {
			continue
		}
		if err != nil {
			return sdk.Adoption{}, engineError(e.name, err)
		}
		found, ins, host = append(found, e.name), res.Container, e.name
	}
	switch {
	case len(found) == 0:
		return sdk.Adoption{}, fmt.Errorf("no container %q was found on the configured engines", ref)
	case len(found) > 1:
		return sdk.Adoption{}, fmt.Errorf("container %q exists on engines %s; name one as ENGINE/%s", ref, strings.Join(found, ", "), ref)
	}
	if ins.Config == nil || ins.HostConfig == nil {
		return sdk.Adoption{}, fmt.Errorf("engine %s did not describe container %q", host, ref)
	}
	network := string(ins.HostConfig.NetworkMode)
	if network != "host" && network != "none" {
		return sdk.Adoption{}, fmt.Errorf("container %q uses network mode %q; container.docker manages containers with host or none networking", ref, network)
	}
	properties := map[string]any{"image": ins.Config.Image, "network": network}
	if len(ins.Config.Cmd) > 0 {
		properties["command"] = strs(ins.Config.Cmd)
	}
	labels := map[string]any{}
	for k, v := range ins.Config.Labels {
		if !strings.HasPrefix(k, "grove.") {
			labels[k] = v
		}
	}
	if len(labels) > 0 {
		properties["labels"] = labels
	}
	if len(ins.HostConfig.Binds) > 0 {
		properties["volumes"] = strs(ins.HostConfig.Binds)
	}
	if ins.HostConfig.NanoCPUs > 0 {
		properties["cpu"] = float64(ins.HostConfig.NanoCPUs) / 1e9
	}
	if ins.HostConfig.Memory > 0 {
		properties["memory"] = ins.HostConfig.Memory >> 20
	}
	if ins.Config.StopTimeout != nil {
		properties["stop_timeout"] = *ins.Config.StopTimeout
	}
	if req.Preview {
		return sdk.Adoption{Properties: properties, Result: sdk.Result{PhysicalID: ins.ID[:min(12, len(ins.ID))]}}, nil
	}
	r := d.result(req.Node, host, ins.ID)
	r.Data["container"] = strings.TrimPrefix(ins.Name, "/")
	return sdk.Adoption{Properties: properties, Result: r}, nil
}

// known reports whether an engine endpoint of this name is configured.
func (d *Driver) known(name string) bool {
	for _, e := range endpoints() {
		if e.name == name {
			return true
		}
	}
	return false
}

func strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}
