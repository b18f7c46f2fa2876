package server

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"

	"github.com/ohler55/ojg/jp"

	"github.com/grovehq/grove/core/engine"
)

// Bounds of GET /v1/clusters/{id}/attrs/{path}: the path is the caller's,
// evaluated once per node, so its size and shape are bounded before it
// runs.
const (
	// MaxAttrPathBytes bounds the path's length.
	MaxAttrPathBytes = 256
	// MaxAttrPathDepth bounds how many steps (keys, indexes, wildcards)
	// the path takes.
	MaxAttrPathDepth = 16
	// MaxAttrMatches bounds how many values a path may match in one node.
	MaxAttrMatches = 256
)

// attrPath parses a collect path (Senlin's: a JSONPath such as
// data.port or details.addresses.private[0].addr, the leading $ optional)
// and says whether it can match more than one value. Filters and scripts
// are refused: they are programs, and the path is untrusted input.
func attrPath(path string) (jp.Expr, bool, error) {
	switch {
	case path == "":
		return nil, false, engine.BadRequest("path must be a JSONPath into a node, such as data.port or details.host.")
	case len(path) > MaxAttrPathBytes:
		return nil, false, engine.BadRequest("path must be at most %d bytes, got %d.", MaxAttrPathBytes, len(path))
	case strings.ContainsAny(path, "?()"):
		return nil, false, engine.BadRequest("path %q holds a filter or script expression, which collect does not run; use keys, indexes and wildcards.", path)
	}
	x, err := jp.ParseString(path)
	if err != nil {
		return nil, false, engine.BadRequest("Illegal attribute path %q: %v.", path, err)
	}
	if len(x) > MaxAttrPathDepth {
		return nil, false, engine.BadRequest("path %q takes %d steps; at most %d are allowed.", path, len(x), MaxAttrPathDepth)
	}
	many := false
	for _, f := range x {
		switch f.(type) {
		case jp.Child, jp.Nth, jp.Root, jp.At, jp.Bracket:
		default:
			many = true // wildcards, descent, unions, slices
		}
	}
	return x, many, nil
}

// collectValue is a path's value in one node's document: the value it
// names, or with wildcards every value it matches, ordered by their JSON
// so that a map's keys do not make the answer vary from call to call.
// Senlin returns only the first match; with a map that one is arbitrary.
func collectValue(x jp.Expr, many bool, doc map[string]any) (any, bool, error) {
	got := x.Get(doc)
	if len(got) == 0 {
		return nil, false, nil
	}
	if len(got) > MaxAttrMatches {
		return nil, false, engine.BadRequest("path %q matches %d values in one node; at most %d are allowed: narrow it.", x.String(), len(got), MaxAttrMatches)
	}
	if !many {
		return got[0], true, nil
	}
	enc := make([][]byte, len(got))
	for i, v := range got {
		enc[i], _ = json.Marshal(v)
	}
	idx := make([]int, len(got))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return bytes.Compare(enc[a], enc[b]) })
	out := make([]any, len(got))
	for i, j := range idx {
		out[i] = got[j]
	}
	return out, true, nil
}

// clusterAttrs is Senlin's collect (GET /v1/clusters/{id}/attrs/{path},
// microversion 1.2): the path is evaluated over each node of the cluster
// as GET /v1/nodes/{id} shows it, with "details" the data its driver
// reported (host, port, address, container or VM id); nodes it matches
// nothing in are left out.
func (s *Server) clusterAttrs(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	x, many, err := attrPath(r.PathValue("path"))
	if err != nil {
		return err
	}
	ctx := s.ctx(r)
	cl, err := s.s.FindCluster(ctx, c.Project, r.PathValue("id"))
	if err != nil {
		return err
	}
	nodes, err := s.s.ClusterNodes(ctx, cl.ID)
	if err != nil {
		return err
	}
	type attr struct {
		ID    string `json:"id"`
		Value any    `json:"value"`
	}
	out := []attr{}
	names := map[string]string{}
	for _, n := range nodes {
		b, err := json.Marshal(s.toNode(ctx, n, names))
		if err != nil {
			return err
		}
		var doc map[string]any
		if err := json.Unmarshal(b, &doc); err != nil {
			return err
		}
		doc["details"] = doc["data"]
		v, ok, err := collectValue(x, many, doc)
		if err != nil {
			return err
		}
		if ok {
			out = append(out, attr{ID: n.ID, Value: v})
		}
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"cluster_attributes": out})
	return nil
}
