package sdk

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	json "github.com/goccy/go-json"

	pb "github.com/grovehq/grove/plugins/sdk/proto"
)

// The converters below are shared by the serving side (Serve) and the calling
// side (Client), so both ends agree on the wire shape by construction.
//
// Documents (properties, inputs, data) travel as JSON, encoded and decoded
// with goccy/go-json: it reads and writes what encoding/json does, and on
// these small maps it takes well under half the time and allocations, which
// shows directly in a call's latency (docs/benchmarks.md).

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

// encodeData encodes a document a plugin's code built, which may hold
// what JSON cannot (NaN, an infinity, a channel): such a document is an
// error naming the first key at fault, in key order, for the caller to
// report as the plugin's instead of a panic that would end the plugin
// process and every call in flight in it.
func encodeData(field string, m map[string]any) ([]byte, error) {
	if len(m) == 0 {
		return nil, nil
	}
	b, err := json.Marshal(m)
	if err == nil {
		return b, nil
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		if _, kerr := json.Marshal(m[k]); kerr != nil {
			return nil, fmt.Errorf("%s.%s cannot be encoded as JSON: %w", field, k, kerr)
		}
	}
	return nil, fmt.Errorf("%s cannot be encoded as JSON: %w", field, err)
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
	pe := &PluginError{Message: validUTF8(e.Message), Field: validUTF8(e.Field), retryable: e.Retryable}
	if e.Retryable {
		return &RetryableError{Err: pe}
	}
	return pe
}

// resultsToProto converts a driver's results for the wire. A result whose
// data cannot be encoded fails its node alone, keeping its physical id and
// state, so the engine still records the resource the driver made and can
// delete it.
func resultsToProto(rs []Result) []*pb.NodeResult {
	out := make([]*pb.NodeResult, len(rs))
	for i, r := range rs {
		data, err := encodeData("data", r.Data)
		if err != nil && r.Err == nil {
			r.Err = fmt.Errorf("the driver's result for node %s is unusable: %w", r.ID, err)
		}
		out[i] = &pb.NodeResult{Id: r.ID, PhysicalId: r.PhysicalID, State: r.State, DataJson: data,
			Healthy: r.Healthy, Completed: r.Completed, StatusReason: r.Reason, Error: ErrorToProto(r.Err)}
	}
	return out
}

// MaxResultData and MaxResultState bound what the engine keeps of one
// node's result: its data as JSON, and its state. Both are stored with the
// node and sent back to the driver with every call about it, so a driver
// that returns megabytes per node would fill the store and every batch.
const (
	MaxResultData  = 1 << 20
	MaxResultState = 1 << 20
)

// resultsFromProto converts a plugin's results from the wire. The wire
// code does not check that strings are UTF-8, and a plugin may pass on a
// backend's bytes as they came; what the engine stores and shows must be
// text (PostgreSQL refuses anything else, failing the whole batch's
// record), so reasons and messages have invalid bytes replaced, and a
// physical id, which cannot be changed without losing the resource it
// names, fails its node with the bytes quoted instead.
//
// Data and state larger than MaxResultData and MaxResultState are not
// kept: the node fails saying so, with the physical id the driver gave,
// so that the resource is still recorded and can be deleted.
func resultsFromProto(rs []*pb.NodeResult) []Result {
	out := make([]Result, len(rs))
	for i, r := range rs {
		if len(r.DataJson) > MaxResultData || len(r.State) > MaxResultState {
			out[i] = Result{ID: r.Id, PhysicalID: r.PhysicalId, Reason: validUTF8(r.StatusReason),
				Err: fmt.Errorf("the driver returned %d bytes of data and %d bytes of state for the node; at most %d of data and %d of state are kept",
					len(r.DataJson), len(r.State), MaxResultData, MaxResultState)}
		} else {
			out[i] = Result{ID: r.Id, PhysicalID: r.PhysicalId, State: r.State, Data: decodeMap(r.DataJson),
				Healthy: r.Healthy, Completed: r.Completed, Reason: validUTF8(r.StatusReason), Err: ErrorFromProto(r.Error)}
		}
		if !utf8.ValidString(r.PhysicalId) {
			out[i].PhysicalID = ""
			out[i].Err = fmt.Errorf("the driver returned a physical id that is not valid UTF-8: %q", r.PhysicalId)
		}
		if !utf8.ValidString(r.Id) {
			// Matches no node; the engine reports the node it was meant
			// for as having no result.
			out[i].ID = validUTF8(r.Id)
		}
	}
	return out
}

// validUTF8 is s with each run of invalid UTF-8 bytes replaced by U+FFFD,
// as encoding/json writes them.
func validUTF8(s string) string {
	if utf8.ValidString(s) {
		return s
	}
	return strings.ToValidUTF8(s, "\uFFFD")
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
		Nodes: nodes, ConfigJson: encodeJSON(c.Config), Profile: profileToProto(c.Profile)}
}

func profileToProto(s Spec) *pb.Spec {
	if s.ID == "" && s.Type == "" && s.Properties == nil {
		return nil
	}
	return SpecToProto(s)
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
		Nodes: nodes, Config: decodeMap(c.ConfigJson), Profile: SpecFromProto(c.Profile)}
}

// policyAPITyped is the policy API version from which data.deletion and
// data.creation travel as typed Decisions.
const policyAPITyped = 2

func apiAtLeast(v string, n int) bool {
	i, err := strconv.Atoi(v)
	return err == nil && i >= n
}

// checkResultToProto converts a policy's data for the wire. When typed is
// set (the host speaks policy API 2 or later), data.deletion and
// data.creation of the Decision shape travel typed and the rest as JSON.
func checkResultToProto(data map[string]any, typed bool) (*pb.CheckResponse, error) {
	resp := &pb.CheckResponse{Status: "OK"}
	if typed {
		resp.Deletion = decisionToProto(data["deletion"])
		resp.Creation = decisionToProto(data["creation"])
	}
	var err error
	if resp.Deletion == nil && resp.Creation == nil {
		resp.ActionDataJson, err = encodeData("data", data)
		return resp, err
	}
	var rest map[string]any
	for k, v := range data {
		if (k == "deletion" && resp.Deletion != nil) || (k == "creation" && resp.Creation != nil) {
			continue
		}
		if rest == nil {
			rest = make(map[string]any, len(data))
		}
		rest[k] = v
	}
	resp.ActionDataJson, err = encodeData("data", rest)
	return resp, err
}

// checkResultFromProto gives back the data a policy returned, as the JSON
// path would have: numbers as float64, lists as []any.
func checkResultFromProto(resp *pb.CheckResponse) map[string]any {
	data := decodeMap(resp.ActionDataJson)
	for _, d := range [...]struct {
		key string
		dec *pb.Decision
	}{{"deletion", resp.Deletion}, {"creation", resp.Creation}} {
		if d.dec == nil {
			continue
		}
		if data == nil {
			data = make(map[string]any, 2)
		}
		data[d.key] = decisionFromProto(d.dec)
	}
	return data
}

// decisionToProto returns the typed form of a deletion or creation map, or
// nil when v is anything else: another shape stays JSON, unchanged.
func decisionToProto(v any) *pb.Decision {
	m, ok := v.(map[string]any)
	if !ok || len(m) == 0 {
		return nil
	}
	d := &pb.Decision{}
	for k, x := range m {
		switch k {
		case "count", "grace_period":
			n, ok := wholeNumber(x)
			if !ok {
				return nil
			}
			if k == "count" {
				d.Count = &n
			} else {
				d.GracePeriod = &n
			}
		case "destroy_after_deletion", "reduce_desired_capacity":
			b, ok := x.(bool)
			if !ok {
				return nil
			}
			if k == "destroy_after_deletion" {
				d.DestroyAfterDeletion = &b
			} else {
				d.ReduceDesiredCapacity = &b
			}
		case "candidates":
			// An empty list cannot be told from no list on the wire.
			c, ok := stringList(x)
			if !ok || len(c) == 0 {
				return nil
			}
			d.Candidates = c
		default:
			return nil
		}
	}
	return d
}

func decisionFromProto(d *pb.Decision) map[string]any {
	m := make(map[string]any, 5)
	if d.Count != nil {
		m["count"] = float64(*d.Count)
	}
	if len(d.Candidates) > 0 {
		c := make([]any, len(d.Candidates))
		for i, s := range d.Candidates {
			c[i] = s
		}
		m["candidates"] = c
	}
	if d.DestroyAfterDeletion != nil {
		m["destroy_after_deletion"] = *d.DestroyAfterDeletion
	}
	if d.GracePeriod != nil {
		m["grace_period"] = float64(*d.GracePeriod)
	}
	if d.ReduceDesiredCapacity != nil {
		m["reduce_desired_capacity"] = *d.ReduceDesiredCapacity
	}
	return m
}

// maxExact is the largest integer a JSON number (a float64) holds exactly.
const maxExact = 1 << 53

// wholeNumber accepts the integers a JSON document would carry unchanged.
func wholeNumber(v any) (int64, bool) {
	var n int64
	switch x := v.(type) {
	case int:
		n = int64(x)
	case int32:
		n = int64(x)
	case int64:
		n = x
	case float64:
		if x != math.Trunc(x) || math.Abs(x) > maxExact {
			return 0, false
		}
		n = int64(x)
	default:
		return 0, false
	}
	return n, n >= -maxExact && n <= maxExact
}

func stringList(v any) ([]string, bool) {
	switch x := v.(type) {
	case []string:
		return x, true
	case []any:
		out := make([]string, len(x))
		for i, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil, false
			}
			out[i] = s
		}
		return out, true
	}
	return nil, false
}

// HostSnapshotToProto converts a host snapshot to its wire form; nil stays
// nil, so policies that do not want hosts cost nothing on the wire.
func HostSnapshotToProto(s *HostSnapshot) *pb.HostSnapshot {
	if s == nil {
		return nil
	}
	out := &pb.HostSnapshot{Error: s.Err, Hosts: make([]*pb.PlacementHost, len(s.Hosts)), Instances: make([]*pb.HostInstance, len(s.Instances))}
	for i, h := range s.Hosts {
		out.Hosts[i] = &pb.PlacementHost{Name: h.Name, Labels: h.Labels, Load: h.Load, MemAvail: h.MemAvail, SwapAvail: h.SwapAvail,
			State: h.State, Availability: h.Availability, Frozen: h.Frozen, Overloaded: h.Overloaded}
	}
	for i, in := range s.Instances {
		out.Instances[i] = &pb.HostInstance{Cluster: in.Cluster, Node: in.Node, Host: in.Host, State: in.State}
	}
	return out
}

// HostSnapshotFromProto converts a wire host snapshot; nil stays nil.
func HostSnapshotFromProto(s *pb.HostSnapshot) *HostSnapshot {
	if s == nil {
		return nil
	}
	out := &HostSnapshot{Err: s.Error, Hosts: make([]PlacementHost, len(s.Hosts)), Instances: make([]HostInstance, len(s.Instances))}
	for i, h := range s.Hosts {
		out.Hosts[i] = PlacementHost{Name: h.Name, Labels: h.Labels, Load: h.Load, MemAvail: h.MemAvail, SwapAvail: h.SwapAvail,
			State: h.State, Availability: h.Availability, Frozen: h.Frozen, Overloaded: h.Overloaded}
	}
	for i, in := range s.Instances {
		out.Instances[i] = HostInstance{Cluster: in.Cluster, Node: in.Node, Host: in.Host, State: in.State}
	}
	return out
}
