package nova

import (
	"context"
	"fmt"

	"github.com/gophercloud/gophercloud/v2"

	"github.com/grovehq/grove/plugins/sdk"
)

// Compute is the compute client of a profile's cloud, logged in as the
// driver logs in for the profile's servers (its context, then clouds.yaml or
// the OS_* variables): the affinity policy manages the server groups of the
// cluster's servers with it. Its microversion is Microversion.
func (d *Driver) Compute(ctx context.Context, profile sdk.Spec) (*gophercloud.ServiceClient, error) {
	pr, err := propsOf(profile)
	if err != nil {
		return nil, err
	}
	c, err := d.connect(ctx, pr.Context)
	if err != nil {
		return nil, err
	}
	return c.compute, nil
}

// LoadBalancer is the Octavia (load-balancer v2) client of a profile's
// cloud, logged in as the driver logs in for the profile's servers: the
// load-balancing policy manages the cluster's load balancer with it. A
// cloud whose catalog (or clouds.yaml's load_balancer_endpoint_override)
// has no load balancer is an error saying so.
func (d *Driver) LoadBalancer(ctx context.Context, profile sdk.Spec) (*gophercloud.ServiceClient, error) {
	pr, err := propsOf(profile)
	if err != nil {
		return nil, err
	}
	c, err := d.connect(ctx, pr.Context)
	if err != nil {
		return nil, err
	}
	if c.loadBalancer == nil {
		return nil, fmt.Errorf("%s has no load-balancer (Octavia) endpoint: add one to its catalog, or load_balancer_endpoint_override to its clouds.yaml entry", c.where)
	}
	return c.loadBalancer, nil
}

// APIError words a failed call to Nova as the driver does: Nova's own
// message, retryable when the cloud did not answer.
func APIError(ctx context.Context, what string, err error) error { return apiError(ctx, what, err) }
