package server

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/grovehq/grove/core/model"
)

// The node list is the API's largest frequent answer (a page of up to a
// thousand nodes, ~550 bytes each), so it is written by hand rather than
// by encoding/json's reflection: the same bytes api.Node encodes to
// (TestNodeViewMatchesNode compares them), with the documents copied as
// stored.

// nodeViewSize is about how many bytes a node takes in the answer, to
// size the buffer once.
const nodeViewSize = 640

// writeNodes answers with {"key": node} (many false) or
// {"key": [node, ...]} as writeJSON would encode api.Node values.
func (s *Server) writeNodes(ctx context.Context, w http.ResponseWriter, key string, many bool, ns []*model.NodeView) {
	names := map[string]string{}
	b := make([]byte, 0, 32+nodeViewSize*len(ns))
	b = append(b, `{"`...)
	b = append(b, key...)
	b = append(b, `":`...)
	if many {
		b = append(b, '[')
	}
	for i, n := range ns {
		if i > 0 {
			b = append(b, ',')
		}
		b = s.appendNodeView(ctx, b, n, names)
	}
	if many {
		b = append(b, ']')
	}
	b = append(b, "}\n"...)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(b)
}

// appendNodeView appends n as api.Node's JSON: its fields in order, a
// profile name looked up once per answer (names), documents {} when empty.
func (s *Server) appendNodeView(ctx context.Context, b []byte, n *model.NodeView, names map[string]string) []byte {
	b = append(b, `{"id":`...)
	b = appendString(b, n.ID)
	b = append(b, `,"name":`...)
	b = appendString(b, n.Name)
	b = append(b, `,"cluster_id":`...)
	b = appendString(b, n.ClusterID)
	b = append(b, `,"physical_id":`...)
	b = appendString(b, n.PhysicalID)
	b = append(b, `,"profile_id":`...)
	b = appendString(b, n.ProfileID)
	b = append(b, `,"profile_name":`...)
	b = appendString(b, s.profileName(ctx, n.ProfileID, names))
	b = append(b, `,"user":`...)
	b = appendString(b, n.User)
	b = append(b, `,"project":`...)
	b = appendString(b, n.Project)
	b = append(b, `,"domain":`...)
	b = appendString(b, n.Domain)
	b = append(b, `,"index":`...)
	b = strconv.AppendInt(b, int64(n.Index), 10)
	b = append(b, `,"role":`...)
	b = appendString(b, n.Role)
	b = append(b, `,"init_at":`...)
	b = appendTime(b, &n.InitAt)
	b = append(b, `,"created_at":`...)
	b = appendTime(b, n.CreatedAt)
	b = append(b, `,"updated_at":`...)
	b = appendTime(b, n.UpdatedAt)
	b = append(b, `,"status":`...)
	b = appendString(b, n.Status)
	b = append(b, `,"status_reason":`...)
	b = appendString(b, n.StatusReason)
	b = append(b, `,"data":`...)
	b = appendObject(b, n.Data)
	b = append(b, `,"metadata":`...)
	b = appendObject(b, n.Metadata)
	b = append(b, `,"dependents":`...)
	b = appendObject(b, n.Dependents)
	b = append(b, `,"tainted":`...)
	b = strconv.AppendBool(b, n.Tainted)
	if n.Host != "" {
		b = append(b, `,"host":`...)
		b = appendString(b, n.Host)
	}
	return append(b, '}')
}

// appendTime appends t as ts formats it, in quotes, or null for nil.
func appendTime(b []byte, t *time.Time) []byte {
	if t == nil {
		return append(b, "null"...)
	}
	b = append(b, '"')
	b = t.UTC().AppendFormat(b, "2006-01-02T15:04:05Z")
	return append(b, '"')
}

// appendString appends v as encoding/json encodes a string: what needs
// no escaping (printable ASCII other than the quote, backslash and the
// HTML characters it escapes) is copied; anything else is left to
// encoding/json itself, so the escaping is exactly its own.
func appendString(b []byte, v string) []byte {
	for i := 0; i < len(v); i++ {
		if c := v[i]; c < 0x20 || c >= utf8.RuneSelf || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, err := json.Marshal(v)
			if err != nil { // a string always encodes
				return append(b, `""`...)
			}
			return append(b, q...)
		}
	}
	b = append(b, '"')
	b = append(b, v...)
	return append(b, '"')
}

// appendObject appends a stored JSON object as encoding/json encodes a
// json.RawMessage (compacted, HTML characters escaped): Grove stores
// json.Marshal's output, already so, which is copied unless it holds a
// byte that compacting or escaping could change; {} when empty.
func appendObject(b []byte, doc json.RawMessage) []byte {
	if len(doc) == 0 {
		return append(b, "{}"...)
	}
	for _, c := range doc {
		if c <= ' ' || c == '<' || c == '>' || c == '&' || c >= utf8.RuneSelf {
			q, err := json.Marshal(doc)
			if err != nil { // the store hands on only valid JSON
				return append(b, "{}"...)
			}
			return append(b, q...)
		}
	}
	return append(b, doc...)
}
