package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/core/store/sqlite"
)

// BenchmarkClusterNodes and BenchmarkCheckNodes read a cluster of 10,000
// nodes as the health round did (every node whole, documents decoded) and
// as it does (CheckNodes), and report the test process's CPU time per
// node (getrusage: the store is in process; GC included).
func BenchmarkClusterNodes(b *testing.B) {
	benchRead(b, 10000, 10000, checkedNode, func(ctx context.Context, s *store.SQL) (int, error) {
		ns, err := s.ClusterNodes(ctx, "c1")
		return len(ns), err
	})
}

// BenchmarkCheckNodes: see BenchmarkClusterNodes.
func BenchmarkCheckNodes(b *testing.B) {
	benchRead(b, 10000, 10000, checkedNode, func(ctx context.Context, s *store.SQL) (int, error) {
		ns, err := s.CheckNodes(ctx, "c1")
		return len(ns), err
	})
}

// checkedNode is a node of the health benchmarks, placed on a host.
func checkedNode(i int, now time.Time) *model.Node {
	id := fmt.Sprintf("%08d-aaaa-bbbb-cccc-dddddddddddd", i)
	return &model.Node{ID: id, Name: "node-" + id[:8], ClusterID: "c1", ProfileID: "p", Project: "p1", InitAt: now, CreatedAt: &now, Status: "ACTIVE",
		PhysicalID: "noop-" + id, Index: i + 1, Data: map[string]any{"label": nil, "placement": map[string]any{"host": "h1"}}}
}

// BenchmarkListAllNodes and BenchmarkPlacedNodes read what placement
// counts out of a store of 100,000 nodes of which one in fifty is on a
// host (half by the host column, half by a host in its data), as the
// placement snapshot did (every node whole) and as it does (PlacedNodes).
// They report the test process's CPU time per stored node.
func BenchmarkListAllNodes(b *testing.B) {
	benchRead(b, 100000, 100000, mostlyUnplaced, func(ctx context.Context, s *store.SQL) (int, error) {
		ns, err := s.ListNodes(ctx, store.ListOpts{})
		return len(ns), err
	})
}

// BenchmarkPlacedNodes: see BenchmarkListAllNodes.
func BenchmarkPlacedNodes(b *testing.B) {
	benchRead(b, 100000, 2000, mostlyUnplaced, func(ctx context.Context, s *store.SQL) (int, error) {
		ns, err := s.PlacedNodes(ctx)
		return len(ns), err
	})
}

// mostlyUnplaced is a node of the placement benchmarks: every hundredth
// on a host by its column, and every hundredth, offset by fifty, by its
// data.
func mostlyUnplaced(i int, now time.Time) *model.Node {
	n := checkedNode(i, now)
	n.InitAt, n.Data = now.Add(time.Duration(i)), map[string]any{"port": float64(20000 + i%1000), "pid": float64(i)}
	switch i % 100 {
	case 0:
		n.Host = "h1"
	case 50:
		n.Data["placement"] = map[string]any{"host": "compute-1"}
	}
	return n
}

// benchRead makes a store of n nodes, node(i) each, and times read, which
// must return want nodes.
func benchRead(b *testing.B, n, want int, node func(i int, now time.Time) *model.Node, read func(context.Context, *store.SQL) (int, error)) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "grove.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	for start := 0; start < n; start += 10000 {
		var nodes []*model.Node
		for i := start; i < min(start+10000, n); i++ {
			nodes = append(nodes, node(i, now))
		}
		if err := s.CreateNodes(ctx, nodes); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	c0 := cpuNow()
	for range b.N {
		if got, err := read(ctx, s); err != nil || got != want {
			b.Fatalf("read %d nodes, want %d: %v", got, want, err)
		}
	}
	b.ReportMetric(float64((cpuNow()-c0).Microseconds())/float64(b.N*n), "cpu-µs/node")
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
