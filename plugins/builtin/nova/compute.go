package nova

import (
	"context"

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

// APIError words a failed call to Nova as the driver does: Nova's own
// message, retryable when the cloud did not answer.
func APIError(ctx context.Context, what string, err error) error { return apiError(ctx, what, err) }
