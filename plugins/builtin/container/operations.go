package container

import (
	"context"
	"fmt"

	"github.com/moby/moby/client"

	"github.com/grovehq/grove/plugins/builtin/internal/props"
	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// nodeOperations are the operations Operate runs on a node's container, as
// the API lists them (GET /v1/profile-types/container.docker-1.0/ops).
func nodeOperations() []sdk.NodeOperation {
	none := schema.Schema{}
	return []sdk.NodeOperation{
		{Name: "start", Description: "Start the node's stopped container.", Parameters: none},
		{Name: "stop", Description: "Stop the node's container (SIGTERM, then SIGKILL after stop_timeout); the node stays, WARNING, until started.", Parameters: none},
		{Name: "restart", Description: "Restart the node's container.", Parameters: none},
		{Name: "pause", Description: "Pause the container's processes; the node is WARNING until unpaused.", Parameters: none},
		{Name: "unpause", Description: "Resume a paused container.", Parameters: none},
	}
}

// Operate runs a node operation on each node's container, on the engine
// that holds it, and reports the container's state afterwards: running and
// not paused is healthy.
func (d *Driver) Operate(ctx context.Context, p sdk.Spec, nodes []sdk.Node, op string, _ map[string]any) []sdk.Result {
	if _, ok := sdk.FindNodeOperation(nodeOperations(), op); !ok {
		out := make([]sdk.Result, len(nodes))
		for i, n := range nodes {
			out[i] = sdk.Result{ID: n.ID, Err: fmt.Errorf("%s has no operation %q", TypeName, op)}
		}
		return out
	}
	timeout := props.Int(p.Properties["stop_timeout"], 10)
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		st := stateOf(n)
		r := sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State}
		c, err := d.client(st.Host)
		if err == nil {
			switch op {
			case "start":
				_, err = c.ContainerStart(ctx, st.Container, client.ContainerStartOptions{})
			case "stop":
				_, err = c.ContainerStop(ctx, st.Container, client.ContainerStopOptions{Timeout: &timeout})
			case "restart":
				_, err = c.ContainerRestart(ctx, st.Container, client.ContainerRestartOptions{Timeout: &timeout})
			case "pause":
				_, err = c.ContainerPause(ctx, st.Container, client.ContainerPauseOptions{})
			case "unpause":
				_, err = c.ContainerUnpause(ctx, st.Container, client.ContainerUnpauseOptions{})
			}
		}
		if err != nil {
			r.Err = engineError(st.Host, err)
			out[i] = r
			continue
		}
		ins, err := c.ContainerInspect(ctx, st.Container, client.ContainerInspectOptions{})
		switch {
		case err != nil:
			r.Err = engineError(st.Host, err)
		case ins.Container.State == nil:
			r.Reason = "the container has no state"
		case ins.Container.State.Paused:
			r.Reason = "container paused"
		case ins.Container.State.Running:
			r.Healthy, r.Reason = true, "container running"
		default:
			r.Reason = fmt.Sprintf("container %s", ins.Container.State.Status)
		}
		out[i] = r
	}
	return out
}
