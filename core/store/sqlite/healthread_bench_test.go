package sqlite_test

import (
	"context"
	"fmt"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store/sqlite"
)

func BenchmarkClusterNodes(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "grove.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	const n = 10000
	var nodes []*model.Node
	for i := range n {
		id := fmt.Sprintf("%08d-aaaa-bbbb-cccc-dddddddddddd", i)
		nodes = append(nodes, &model.Node{ID: id, Name: "node-" + id[:8], ClusterID: "c1", ProfileID: "p", Project: "p1", InitAt: now, CreatedAt: &now, Status: "ACTIVE",
			PhysicalID: "noop-" + id, Index: i + 1, Data: map[string]any{"label": nil, "placement": map[string]any{"host": "h1"}}})
	}
	if err := s.CreateNodes(ctx, nodes); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	c0 := cpuNow()
	for range b.N {
		got, err := s.ClusterNodes(ctx, "c1")
		if err != nil || len(got) != n {
			b.Fatal(err, len(got))
		}
	}
	b.ReportMetric(float64((cpuNow()-c0).Microseconds())/float64(b.N*n), "cpu-µs/node")
}

func BenchmarkCheckNodes(b *testing.B) {
	ctx := context.Background()
	s, err := sqlite.Open(ctx, filepath.Join(b.TempDir(), "grove.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	now := time.Now()
	const n = 10000
	var nodes []*model.Node
	for i := range n {
		id := fmt.Sprintf("%08d-aaaa-bbbb-cccc-dddddddddddd", i)
		nodes = append(nodes, &model.Node{ID: id, Name: "node-" + id[:8], ClusterID: "c1", ProfileID: "p", Project: "p1", InitAt: now, CreatedAt: &now, Status: "ACTIVE",
			PhysicalID: "noop-" + id, Index: i + 1, Data: map[string]any{"label": nil, "placement": map[string]any{"host": "h1"}}})
	}
	if err := s.CreateNodes(ctx, nodes); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	c0 := cpuNow()
	for range b.N {
		got, err := s.CheckNodes(ctx, "c1")
		if err != nil || len(got) != n {
			b.Fatal(err, len(got))
		}
	}
	b.ReportMetric(float64((cpuNow()-c0).Microseconds())/float64(b.N*n), "cpu-µs/node")
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
