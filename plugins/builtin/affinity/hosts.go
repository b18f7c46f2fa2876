package affinity

import (
	"context"

	"github.com/grovehq/grove/plugins/builtin/affinity/decide"
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/sdk"
)

// hostsBackend keeps container.docker clusters together or apart over the
// driver's engines (GROVE_DOCKER_HOSTS): each new node's placement names
// its engine, and a node hard anti-affinity finds no engine for is refused
// with the reason, which the driver fails it with.
type hostsBackend struct{}

func (hostsBackend) attach(context.Context, Properties, sdk.Cluster) (map[string]any, error) {
	return map[string]any{}, nil
}

func (hostsBackend) detach(context.Context, Properties, sdk.Cluster, map[string]any) error {
	return nil
}

func (hostsBackend) place(_ context.Context, pr Properties, req sdk.CheckRequest, count int) ([]decide.Entry, string, map[string]any, error) {
	return decide.Assign(pr.ServerGroup.Policies, count, container.HostNames(), running(req.Cluster)), "", nil, nil
}

// running counts the cluster's nodes on each host, as their data says
// (the host the driver put them on, else the one they were placed on).
func running(c sdk.Cluster) map[string]int {
	out := map[string]int{}
	for _, n := range c.Nodes {
		h, _ := n.Data["host"].(string)
		if h == "" {
			pl, _ := n.Data["placement"].(map[string]any)
			h, _ = pl["host"].(string)
		}
		if h != "" {
			out[h]++
		}
	}
	return out
}
