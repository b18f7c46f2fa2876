//go:build !linux

package process

import (
	"context"
	"fmt"
	"os"
	"runtime"

	"github.com/grovehq/grove/plugins/sdk"
)

// supported reports why local.process cannot run here.
func supported() error { return unsupportedOn(runtime.GOOS) }

// watcher returns nil: without processes there are no events to stream.
func (d *Driver) watcher() func(context.Context, func(sdk.NodeEvent)) error { return nil }

// Driver is local.process's driver on a platform it does not support: every
// call fails with the reason.
type Driver struct {
	// Dir is accepted for compatibility with the Linux driver and unused.
	Dir string
}

func unsupported(nodes []sdk.Node) []sdk.Result {
	err := supported()
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		out[i] = sdk.Result{ID: n.ID, Err: err}
	}
	return out
}

// Create fails: local.process runs only on Linux.
func (d *Driver) Create(_ context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return unsupported(nodes)
}

// Delete fails: local.process runs only on Linux.
func (d *Driver) Delete(_ context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return unsupported(nodes)
}

// Check fails: local.process runs only on Linux.
func (d *Driver) Check(_ context.Context, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return unsupported(nodes)
}

// Update fails: local.process runs only on Linux.
func (d *Driver) Update(_ context.Context, _, _ sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return unsupported(nodes)
}

// Recover fails: local.process runs only on Linux.
func (d *Driver) Recover(_ context.Context, _ sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	return unsupported(nodes)
}

// RunWrapper reports that the wrapper is Linux-only and returns 2.
func RunWrapper(_ []string) int {
	fmt.Fprintln(os.Stderr, supported())
	return 2
}

// RunSupervisor reports that the supervisor is Linux-only and returns 2.
func RunSupervisor(_ []string) int {
	fmt.Fprintln(os.Stderr, supported())
	return 2
}

// Operate fails: local.process runs only on Linux.
func (d *Driver) Operate(_ context.Context, _ sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	return unsupported(nodes)
}

// Adopt fails with the reason local.process does not run here.
func (d *Driver) Adopt(context.Context, sdk.AdoptRequest) (sdk.Adoption, error) {
	return sdk.Adoption{}, supported()
}
