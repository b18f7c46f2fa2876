package sdk

import (
	"encoding/json"

	pb "github.com/grovehq/grove/plugins/proto"
)

// The converters below are shared by the serving side (Serve) and the calling
// side (Client), so both ends agree on the wire shape by construction.

func encodeJSON(v any) []byte {
	// Empty documents travel as no bytes: most calls carry several of them
	// and encoding or decoding "null" costs as much as a small map.
	switch x := v.(type) {
	case nil:
		return nil
	case map[string]any:
		if len(x) == 0 {
			return nil
		}
	}
	b, err := json.Marshal(v)
	if err != nil {
		// Values come from JSON or from plugin code building maps of plain
		// values; a failure here is a programming error worth seeing.
		panic("grove sdk: cannot encode value as JSON: " + err.Error())
	}
	return b
}

func decodeMap(b []byte) map[string]any {
	if len(b) == 0 || string(b) == "null" || string(b) == "{}" {
		return nil
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil
	}
	return m
}

// SpecToProto converts a Spec for the wire.
func SpecToProto(s Spec) *pb.Spec {
	return &pb.Spec{Id: s.ID, Name: s.Name, Type: s.Type, Version: s.Version, PropertiesJson: encodeJSON(s.Properties)}
}

// SpecFromProto converts a Spec from the wire.
func SpecFromProto(s *pb.Spec) Spec {
	if s == nil {
		return Spec{}
	}
	return Spec{ID: s.Id, Name: s.Name, Type: s.Type, Version: s.Version, Properties: decodeMap(s.PropertiesJson)}
}

// NodeToProto converts a Node for the wire.
func NodeToProto(n Node) *pb.Node {
	return &pb.Node{Id: n.ID, Name: n.Name, Index: int32(n.Index), ClusterId: n.ClusterID, ClusterName: n.ClusterName,
		PhysicalId: n.PhysicalID, State: n.State, DataJson: encodeJSON(n.Data), MetadataJson: encodeJSON(n.Metadata)}
}

// NodeFromProto converts a Node from the wire.
func NodeFromProto(n *pb.Node) Node {
	return Node{ID: n.Id, Name: n.Name, Index: int(n.Index), ClusterID: n.ClusterId, ClusterName: n.ClusterName,
		PhysicalID: n.PhysicalId, State: n.State, Data: decodeMap(n.DataJson), Metadata: decodeMap(n.MetadataJson)}
}

func nodesToProto(nodes []Node) []*pb.Node {
	out := make([]*pb.Node, len(nodes))
	for i, n := range nodes {
		out[i] = NodeToProto(n)
	}
	return out
}

func nodesFromProto(nodes []*pb.Node) []Node {
	out := make([]Node, len(nodes))
	for i, n := range nodes {
		out[i] = NodeFromProto(n)
	}
	return out
}

// ErrorToProto converts an error for the wire, keeping the retryable mark.
func ErrorToProto(err error) *pb.Error {
	if err == nil {
		return nil
	}
	return &pb.Error{Message: err.Error(), Retryable: IsRetryable(err)}
}

// PluginError is an error reported by a plugin across the boundary.
type PluginError struct {
	Message   string
	Field     string
	retryable bool
}

func (e *PluginError) Error() string { return e.Message }

// Retryable reports whether the plugin marked the failure retryable.
func (e *PluginError) Retryable() bool { return e.retryable }

// ErrorFromProto converts a wire error; retryable errors satisfy IsRetryable.
func ErrorFromProto(e *pb.Error) error {
	if e == nil {
		return nil
	}
	pe := &PluginError{Message: e.Message, Field: e.Field, retryable: e.Retryable}
	if e.Retryable {
		return &RetryableError{Err: pe}
	}
	return pe
}

func resultsToProto(rs []Result) []*pb.NodeResult {
	out := make([]*pb.NodeResult, len(rs))
	for i, r := range rs {
		out[i] = &pb.NodeResult{Id: r.ID, PhysicalId: r.PhysicalID, State: r.State, DataJson: encodeJSON(r.Data),
			Healthy: r.Healthy, Completed: r.Completed, StatusReason: r.Reason, Error: ErrorToProto(r.Err)}
	}
	return out
}

func resultsFromProto(rs []*pb.NodeResult) []Result {
	out := make([]Result, len(rs))
	for i, r := range rs {
		out[i] = Result{ID: r.Id, PhysicalID: r.PhysicalId, State: r.State, Data: decodeMap(r.DataJson),
			Healthy: r.Healthy, Completed: r.Completed, Reason: r.StatusReason, Err: ErrorFromProto(r.Error)}
	}
	return out
}

// ClusterToProto converts a cluster snapshot for the wire.
func ClusterToProto(c Cluster) *pb.ClusterSnapshot {
	nodes := make([]*pb.SnapshotNode, len(c.Nodes))
	for i, n := range c.Nodes {
		nodes[i] = &pb.SnapshotNode{Id: n.ID, Name: n.Name, Status: n.Status, Index: int32(n.Index), ProfileId: n.ProfileID,
			CreatedAt: n.CreatedAt, ProfileCreatedAt: n.ProfileCreatedAt, Tainted: n.Tainted, DataJson: encodeJSON(n.Data)}
	}
	return &pb.ClusterSnapshot{Id: c.ID, Name: c.Name, ProfileId: c.ProfileID, ProfileType: c.ProfileType,
		DesiredCapacity: int32(c.DesiredCapacity), MinSize: int32(c.MinSize), MaxSize: int32(c.MaxSize),
		Nodes: nodes, ConfigJson: encodeJSON(c.Config)}
}

// ClusterFromProto converts a cluster snapshot from the wire.
func ClusterFromProto(c *pb.ClusterSnapshot) Cluster {
	if c == nil {
		return Cluster{}
	}
	nodes := make([]ClusterNode, len(c.Nodes))
	for i, n := range c.Nodes {
		nodes[i] = ClusterNode{ID: n.Id, Name: n.Name, Status: n.Status, Index: int(n.Index), ProfileID: n.ProfileId,
			CreatedAt: n.CreatedAt, ProfileCreatedAt: n.ProfileCreatedAt, Tainted: n.Tainted, Data: decodeMap(n.DataJson)}
	}
	return Cluster{ID: c.Id, Name: c.Name, ProfileID: c.ProfileId, ProfileType: c.ProfileType,
		DesiredCapacity: int(c.DesiredCapacity), MinSize: int(c.MinSize), MaxSize: int(c.MaxSize),
		Nodes: nodes, Config: decodeMap(c.ConfigJson)}
}
