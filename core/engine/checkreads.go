package engine

import (
	"context"
	"sync"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/sdk"
)

// checkReads keeps what each cluster's last health round read of its nodes,
// with the node generation (store.NodeChanges) it was read at, and the
// check calls' batches made from them. Reading every node's row every round,
// and converting each node for the wire, was most of what a check cost the
// agent (issue 24: at most 3 µs of agent CPU per node per check); a cluster
// whose generation has not moved since is checked from what was read, and
// any write to one of its nodes, by this agent or another sharing the store,
// moves it.
//
// The generation is read before the nodes. A write landing between the two
// leaves newer nodes filed under the older generation, which the next round
// finds moved and reads again; the other order could keep older nodes under
// the newer generation for good.
type checkReads struct {
	mu        sync.Mutex
	byCluster map[string]*checkRead
}

// checkRead is one cluster's nodes as a round read them. Everything in it
// is shared between rounds and never changed once made, except groups,
// which checkReads.mu guards.
type checkRead struct {
	gen   int64
	nodes []*model.CheckNode
	// byProfile holds the nodes a check looks at (ACTIVE and ERROR), by
	// profile id, in index order.
	byProfile map[string][]*model.CheckNode
	groups    map[groupKey]checkGroup
}

// groupKey is what decides which of a profile's nodes a round checks and
// how they travel: the cluster's name goes to the driver with each node,
// and all says whether this agent checks every node or only its own
// host-local ones.
type groupKey struct {
	profile, cluster string
	all              bool
}

// checkGroup is the nodes of one profile a round checks here, and the
// batches of its check calls.
type checkGroup struct {
	nodes   []*model.CheckNode
	batches []sdk.NodeBatch
}

func newCheckReads() *checkReads {
	return &checkReads{byCluster: map[string]*checkRead{}}
}

// read returns the cluster's nodes as a check reads them, from the last
// read when the cluster's nodes have not changed since.
func (c *checkReads) read(ctx context.Context, s store.Store, clusterID string) (*checkRead, error) {
	gen, err := s.NodeChanges(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	last := c.byCluster[clusterID]
	c.mu.Unlock()
	// Generation 0 is a cluster the store has recorded no change for
	// (no nodes yet): read it every time.
	if last != nil && gen != 0 && last.gen == gen {
		return last, nil
	}
	nodes, err := s.CheckNodes(ctx, clusterID)
	if err != nil {
		return nil, err
	}
	r := &checkRead{gen: gen, nodes: nodes, byProfile: map[string][]*model.CheckNode{}, groups: map[groupKey]checkGroup{}}
	for _, n := range nodes {
		if n.Status == model.NodeActive || n.Status == model.NodeError {
			r.byProfile[n.ProfileID] = append(r.byProfile[n.ProfileID], n)
		}
	}
	c.mu.Lock()
	if gen != 0 {
		c.byCluster[clusterID] = r
	} else {
		delete(c.byCluster, clusterID)
	}
	c.mu.Unlock()
	return r, nil
}

// group returns the group of r's nodes for key, made by build the first
// time it is asked for.
func (c *checkReads) group(r *checkRead, key groupKey, build func() checkGroup) checkGroup {
	c.mu.Lock()
	g, ok := r.groups[key]
	c.mu.Unlock()
	if ok {
		return g
	}
	g = build()
	c.mu.Lock()
	r.groups[key] = g
	c.mu.Unlock()
	return g
}

// keepOnly forgets the clusters not in ids (deleted ones, or ones this
// agent no longer checks), so their nodes are not held for ever.
func (c *checkReads) keepOnly(ids map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id := range c.byCluster {
		if !ids[id] {
			delete(c.byCluster, id)
		}
	}
}
