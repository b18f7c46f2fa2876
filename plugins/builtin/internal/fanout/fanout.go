// Package fanout runs a built-in driver's per-node work over a batch of
// nodes: each node in parallel up to a bound, a batch failed as a whole,
// and nodes replaced (deleted, then created again) where their delete went
// through. The drivers that call remote services (Nova, vSphere, the
// container engine) share it so that the order of results, the bound and
// the retry rule are the same in each.
package fanout

import (
	"context"
	"fmt"
	"maps"
	"sync"

	sdk "github.com/grovehq/grove/plugins/sdk"
)

// Each runs f for every node, at most limit at once, and returns the
// results in the nodes' order.
func Each(nodes []sdk.Node, limit int, f func(sdk.Node) sdk.Result) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(limit, 1))
	for i, n := range nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			out[i] = f(n)
		}()
	}
	wg.Wait()
	return out
}

// FailAll fails every node with err, keeping what each node had. When ctx
// was cut the error is made retryable: the work was interrupted, not
// refused, and the engine tries it again.
func FailAll(ctx context.Context, nodes []sdk.Node, err error) []sdk.Result {
	if ctx.Err() != nil && !sdk.IsRetryable(err) {
		err = sdk.Retryable(fmt.Errorf("%w (%v)", err, ctx.Err()))
	}
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		out[i] = sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID, State: n.State, Err: err}
	}
	return out
}

// Replace creates again the nodes whose old resources gone (the results
// of deleting them, in the nodes' order) reports deleted. Each such node
// is passed to create without its physical id, its state and dataKey, the
// data entry naming the old resource, so that the driver makes a new one
// rather than finding the old. A node whose delete failed keeps that
// failure and is not created again.
func Replace(nodes []sdk.Node, gone []sdk.Result, dataKey string, create func([]sdk.Node) []sdk.Result) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	var todo []int
	for i, r := range gone {
		if r.Err != nil {
			out[i] = r
			continue
		}
		todo = append(todo, i)
	}
	batch := make([]sdk.Node, len(todo))
	for j, i := range todo {
		n := nodes[i]
		n.State, n.PhysicalID = nil, ""
		if n.Data != nil {
			n.Data = maps.Clone(n.Data)
			delete(n.Data, dataKey)
		}
		batch[j] = n
	}
	made := create(batch)
	for j, i := range todo {
		out[i] = made[j]
	}
	return out
}
