package sdk

import (
	"context"
	"fmt"

	pb "github.com/grovehq/grove/plugins/sdk/proto"
)

// The bounds of one batch call a caller splits a long node list into. gRPC
// refuses a message over 4 MiB by default, and a check's reply carries each
// node's data back, so a request is kept well under that: a cluster of any
// size is checked in calls that each fit, and one call's failure costs only
// its nodes.
const (
	// DefaultBatchNodes is the most nodes one call carries.
	DefaultBatchNodes = 1000
	// DefaultBatchBytes is the most bytes of node records one call
	// carries; a single node over it still travels, alone.
	DefaultBatchBytes = 1 << 20
)

// NodeBatch is a slice of nodes already converted for the wire, so
// splitting a list by encoded size does not encode each node twice.
type NodeBatch struct {
	// Nodes are the batch's nodes, in the order given to SplitNodes.
	Nodes []Node
	wire  []*pb.Node
}

// SplitNodes splits nodes into batches of at most maxNodes nodes and about
// maxBytes encoded bytes each (zero or less takes the default), keeping
// their order.
func SplitNodes(nodes []Node, maxNodes, maxBytes int) []NodeBatch {
	if maxNodes <= 0 {
		maxNodes = DefaultBatchNodes
	}
	if maxBytes <= 0 {
		maxBytes = DefaultBatchBytes
	}
	var out []NodeBatch
	var cur NodeBatch
	size := 0
	for _, n := range nodes {
		w := NodeToProto(n)
		// The field's tag and length prefix cost a few bytes more.
		s := w.SizeVT() + 8
		if len(cur.Nodes) > 0 && (len(cur.Nodes) >= maxNodes || size+s > maxBytes) {
			out = append(out, cur)
			cur, size = NodeBatch{}, 0
		}
		cur.Nodes = append(cur.Nodes, n)
		cur.wire = append(cur.wire, w)
		size += s
	}
	if len(cur.Nodes) > 0 {
		out = append(out, cur)
	}
	return out
}

// BatchOf runs create, delete or check on a batch SplitNodes made, as
// Batch does on a node list.
func (c *Client) BatchOf(ctx context.Context, call ProfileCall, p Spec, b NodeBatch) ([]Result, error) {
	req := &pb.BatchRequest{Profile: c.wire(p), Nodes: b.wire}
	var resp *pb.BatchResponse
	var err error
	switch call {
	case CallCreate:
		resp, err = c.Profile.Create(ctx, req)
	case CallDelete:
		resp, err = c.Profile.Delete(ctx, req)
	case CallCheck:
		resp, err = c.Profile.Check(ctx, req)
	default:
		return nil, fmt.Errorf("unknown profile call %q", call)
	}
	return batchResult(resp, err)
}
