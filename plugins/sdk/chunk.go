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
	// Nodes are the batch's nodes, in the order given to SplitNodes; nil
	// in a batch SplitJSONNodes made (Len and IDs serve both).
	Nodes []Node
	wire  []*pb.Node
}

// Len is how many nodes the batch carries.
func (b NodeBatch) Len() int { return len(b.wire) }

// IDs are the ids of the batch's nodes, in order.
func (b NodeBatch) IDs() []string {
	out := make([]string, len(b.wire))
	for i, w := range b.wire {
		out[i] = w.Id
	}
	return out
}

// JSONNode is a node whose data and metadata are JSON objects already, as
// a store keeps them: they travel as they are, where a Node's maps are
// encoded for every call. A health check of a large cluster sends each
// node every round, and decoding its documents only to encode them again
// was most of what the round cost.
type JSONNode struct {
	ID, Name, ClusterID, ClusterName, PhysicalID string
	Index                                        int
	State                                        []byte
	// Data and Metadata are JSON objects; empty or "{}" when there are none.
	Data, Metadata []byte
}

// SplitJSONNodes is SplitNodes for nodes whose documents are JSON already.
// The driver receives what it would from the same nodes as Nodes.
func SplitJSONNodes(nodes []JSONNode, maxNodes, maxBytes int) []NodeBatch {
	wire := make([]pb.Node, len(nodes))
	return split(len(nodes), maxNodes, maxBytes, func(i int) (*pb.Node, *Node) {
		n := &nodes[i]
		w := &wire[i]
		*w = pb.Node{Id: n.ID, Name: n.Name, Index: int32(n.Index), ClusterId: n.ClusterID, ClusterName: n.ClusterName,
			PhysicalId: n.PhysicalID, State: n.State, DataJson: wireJSON(n.Data), MetadataJson: wireJSON(n.Metadata)}
		return w, nil
	})
}

// wireJSON is a stored JSON document as encodeJSON would send it: an empty
// object travels as no bytes.
func wireJSON(b []byte) []byte {
	if len(b) == 0 || string(b) == "{}" || string(b) == "null" {
		return nil
	}
	return b
}

// SplitNodes splits nodes into batches of at most maxNodes nodes and about
// maxBytes encoded bytes each (zero or less takes the default), keeping
// their order.
func SplitNodes(nodes []Node, maxNodes, maxBytes int) []NodeBatch {
	return split(len(nodes), maxNodes, maxBytes, func(i int) (*pb.Node, *Node) {
		return NodeToProto(nodes[i]), &nodes[i]
	})
}

// split cuts count nodes, each given by node as its wire form (and as a
// Node, when there is one), into batches within the bounds.
func split(count, maxNodes, maxBytes int, node func(i int) (*pb.Node, *Node)) []NodeBatch {
	if maxNodes <= 0 {
		maxNodes = DefaultBatchNodes
	}
	if maxBytes <= 0 {
		maxBytes = DefaultBatchBytes
	}
	var out []NodeBatch
	var cur NodeBatch
	size := 0
	for i := range count {
		w, n := node(i)
		// The field's tag and length prefix cost a few bytes more.
		s := w.SizeVT() + 8
		if len(cur.wire) > 0 && (len(cur.wire) >= maxNodes || size+s > maxBytes) {
			out = append(out, cur)
			cur, size = NodeBatch{}, 0
		}
		if n != nil {
			cur.Nodes = append(cur.Nodes, *n)
		}
		cur.wire = append(cur.wire, w)
		size += s
	}
	if len(cur.wire) > 0 {
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
