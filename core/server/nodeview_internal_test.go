package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/sqlite"
)

// TestNodeViewMatchesNode holds the node list's and node show's lean path
// (ListNodeViews and FindNodeView, documents passed through undecoded) to
// what the path through model.Node and api.Node writes, byte for byte:
// field names and order, null and {} for empty documents, time formats,
// escaping, for nodes with and without data, metadata and dependents.
func TestNodeViewMatchesNode(t *testing.T) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(t.TempDir(), "grove.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	prof := &model.Profile{ID: "0f000000-0000-4000-8000-000000000001", Name: "web", Type: "grove.noop", Version: "1.0",
		Spec: map[string]any{}, Properties: map[string]any{}, Project: "p", CreatedAt: time.Now()}
	if err := st.CreateProfile(ctx, prof); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 1, 2, 3, 4, 5, 678901000, time.UTC)
	later := at.Add(90 * time.Minute)
	nodes := []*model.Node{
		// No documents at all (nil maps), never created.
		{ID: "d0000000-0000-4000-8000-000000000001", Name: "bare", ProfileID: prof.ID, Project: "p", Status: "INIT", InitAt: at},
		// Empty, non-nil documents.
		{ID: "d0000000-0000-4000-8000-000000000002", Name: "empty", ProfileID: prof.ID, Project: "p", Status: "ACTIVE", InitAt: at.Add(time.Second),
			CreatedAt: &at, Data: map[string]any{}, Metadata: map[string]any{}, Dependents: map[string]any{}},
		// Every document, with what encoding must keep: nesting, key
		// order, numbers, HTML characters, non-ASCII and U+2028, null.
		{ID: "d0000000-0000-4000-8000-000000000003", Name: "full", ClusterID: "c1", PhysicalID: "phys-3", ProfileID: prof.ID,
			User: "u", Project: "p", Domain: "d", Index: 3, Role: "leader", InitAt: at.Add(2 * time.Second), CreatedAt: &at, UpdatedAt: &later,
			Status: "ERROR", StatusReason: `it failed: <b>"x" & y</b>`, Tainted: true, Host: "host-a",
			Data: map[string]any{"z": 1, "a": []any{1.5, "two", nil, true, map[string]any{"k": "v"}}, "big": 1e21, "small": 1e-7,
				"int": 9007199254740991, "neg": -42, "html": "<script>&</script>", "uni": "héllo \u2028 ✓ \u0001", "empty": map[string]any{}},
			Metadata:   map[string]any{"owner": "team", "nested": map[string]any{"b": 2, "a": 1}},
			Dependents: map[string]any{"nodes": []any{"d0000000-0000-4000-8000-000000000001"}}},
		// A node whose profile is gone: an empty profile name.
		{ID: "d0000000-0000-4000-8000-000000000004", Name: "orphan", ProfileID: "gone", Project: "p", Status: "ACTIVE",
			InitAt: at.Add(3 * time.Second), Metadata: map[string]any{"only": "metadata"}},
	}
	if err := st.CreateNodes(ctx, nodes); err != nil {
		t.Fatal(err)
	}
	// Documents Grove never writes (it stores json.Marshal's output of a
	// map, "{}" for none), as a damaged or hand-edited row may hold them:
	// both paths show {} for what is not a JSON object.
	for i, doc := range []string{"null", "", "[1,2]", "{broken", `"text"`} {
		if _, err := st.DB().ExecContext(ctx, `INSERT INTO nodes (id, name, cluster_id, physical_id, profile_id, usr, project, domain, idx, role,
			init_at, created_at, updated_at, status, status_reason, tainted, data, metadata, dependents, state, host)
			VALUES (?, ?, '', '', ?, '', 'p', '', 0, '', ?, NULL, NULL, 'ACTIVE', '', 0, ?, ?, ?, '', '')`,
			fmt.Sprintf("d0000000-0000-4000-8000-1000000000%02d", i), fmt.Sprintf("odd-%d", i), prof.ID,
			at.Add(time.Duration(10+i)*time.Second).UnixMicro(), doc, doc, doc); err != nil {
			t.Fatal(err)
		}
		nodes = append(nodes, &model.Node{Name: fmt.Sprintf("odd-%d", i)})
	}
	s := &Server{s: st, r: store.ReadsOf(st)}
	encode := func(v any) []byte {
		var b bytes.Buffer
		if err := json.NewEncoder(&b).Encode(v); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}

	o := store.ListOpts{Project: "p"}
	old, err := s.r.ListNodes(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	lean, err := s.r.ListNodeViews(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(old) != len(nodes) || len(lean) != len(nodes) {
		t.Fatalf("listed %d and %d nodes, want %d", len(old), len(lean), len(nodes))
	}
	oldOut := make([]api.Node, 0, len(old))
	oldNames := map[string]string{}
	for i := range old {
		oldOut = append(oldOut, s.toNode(ctx, old[i], oldNames))
	}
	want, got := encode(map[string]any{"nodes": oldOut}), written(s, "nodes", true, lean)
	if !bytes.Equal(want, got) {
		t.Fatalf("the node list differs from the old path's:\nold:  %s\nlean: %s", want, got)
	}
	// The comparison must have seen what it claims to: every kind of
	// document, and a profile name.
	for _, frag := range []string{`"data":{}`, `"dependents":{"nodes":[`, `"big":1e+21`, `\u003cscript\u003e`, `\u2028`,
		`"profile_name":"web"`, `"profile_name":""`, `"updated_at":null`, `"init_at":"2026-01-02T03:04:05Z"`, `"host":"host-a"`} {
		if !bytes.Contains(got, []byte(frag)) {
			t.Errorf("the list lacks %s: %s", frag, got)
		}
	}

	for _, n := range nodes {
		o, err := s.r.FindNode(ctx, "p", n.Name)
		if err != nil {
			t.Fatal(err)
		}
		l, err := s.r.FindNodeView(ctx, "p", n.Name)
		if err != nil {
			t.Fatal(err)
		}
		want := encode(map[string]any{"node": s.toNode(ctx, o, map[string]string{})})
		got := written(s, "node", false, []*model.NodeView{l})
		if !bytes.Equal(want, got) {
			t.Errorf("node %s differs from the old path's:\nold:  %s\nlean: %s", n.Name, want, got)
		}
	}
	none, err := s.r.ListNodeViews(ctx, store.ListOpts{Project: "other"})
	if err != nil {
		t.Fatal(err)
	}
	if want, got := encode(map[string]any{"nodes": []api.Node{}}), written(s, "nodes", true, none); !bytes.Equal(want, got) {
		t.Errorf("an empty list is %s, want %s", got, want)
	}
	if _, err := s.r.FindNodeView(ctx, "other", "full"); err == nil {
		t.Error("FindNodeView found a node of another project")
	}
}

// written is what writeNodes answers.
func written(s *Server, key string, many bool, ns []*model.NodeView) []byte {
	w := httptest.NewRecorder()
	s.writeNodes(context.Background(), w, key, many, ns)
	return w.Body.Bytes()
}

// FuzzAppendString: appendString writes what encoding/json writes for
// any string, valid UTF-8 or not.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "plain-id", `q"uote\`, "<b>&amp;</b>", "tab\tnl\n\x00", "héllo \u2028\u2029 ✓", "bad \xff\xfe utf8"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		want, err := json.Marshal(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := appendString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendString(%q) = %s, want %s", s, got[1:], want)
		}
	})
}

// FuzzAppendObject: appendObject writes what encoding/json writes for a
// json.RawMessage holding any valid JSON object.
func FuzzAppendObject(f *testing.F) {
	for _, s := range []string{`{}`, `{"a":1}`, `{ "b" : [1, 2] ,"a":"<x> & y"}`, `{"s":"\u2028 é ✓"}`, "{\"s\":\"\u2028\"}", `{"n":1e+21,"m":-0.5}`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if len(s) == 0 || s[0] != '{' || !json.Valid([]byte(s)) {
			return
		}
		want, err := json.Marshal(json.RawMessage(s))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendObject(nil, json.RawMessage(s)); string(got) != string(want) {
			t.Errorf("appendObject(%s) = %s, want %s", s, got, want)
		}
	})
}

// BenchmarkNodePage serves one 100-node page of GET /v1/nodes, reached by
// a marker, from a 10,000-node SQLite store, the lean way (ListNodeViews,
// written by hand) and the old way (ListNodes decoding every document and
// the driver state, api.Node through encoding/json), side by side in one
// run: CPU and allocations per page without the HTTP hop.
func BenchmarkNodePage(b *testing.B) {
	ctx := context.Background()
	st, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "grove.db"))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	prof := &model.Profile{ID: "0f000000-0000-4000-8000-000000000001", Name: "noop", Type: "grove.noop", Version: "1.0", Project: "default", CreatedAt: time.Now()}
	if err := st.CreateProfile(ctx, prof); err != nil {
		b.Fatal(err)
	}
	const size = 10000
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	nodes := make([]*model.Node, 0, size)
	for i := range size {
		nodes = append(nodes, &model.Node{ID: fmt.Sprintf("d%07d-0000-4000-8000-000000000001", i), Name: fmt.Sprintf("node-%08x", i),
			ClusterID: "c0000000-0000-4000-8000-000000000001", PhysicalID: fmt.Sprintf("noop-%d", i), ProfileID: prof.ID, User: "dev",
			Project: "default", Index: i + 1, InitAt: at.Add(time.Duration(i) * time.Millisecond), CreatedAt: &at, UpdatedAt: &at,
			Status: "ACTIVE", StatusReason: "Creation succeeded", Data: map[string]any{"placement": map[string]any{"zone": "local"}, "noop": true},
			State: []byte("opaque driver state of some length")})
	}
	if err := st.CreateNodes(ctx, nodes); err != nil {
		b.Fatal(err)
	}
	s := &Server{s: st, r: store.ReadsOf(st)}
	page := func(i int) store.ListOpts {
		return store.ListOpts{Project: "default", Limit: 100, Marker: nodes[(i*100+99)%size].ID}
	}
	b.Run("lean", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			ns, err := s.r.ListNodeViews(ctx, page(i))
			if err != nil || len(ns) != 100 && len(ns) != 0 {
				b.Fatalf("%d nodes, %v", len(ns), err)
			}
			s.writeNodes(ctx, httptest.NewRecorder(), "nodes", true, ns)
		}
	})
	b.Run("old", func(b *testing.B) {
		for i := 0; b.Loop(); i++ {
			ns, err := s.r.ListNodes(ctx, page(i))
			if err != nil || len(ns) != 100 && len(ns) != 0 {
				b.Fatalf("%d nodes, %v", len(ns), err)
			}
			names := map[string]string{}
			out := make([]api.Node, 0, len(ns))
			for _, n := range ns {
				out = append(out, s.toNode(ctx, n, names))
			}
			s.writeJSON(httptest.NewRecorder(), http.StatusOK, map[string]any{"nodes": out})
		}
	})
}
