package placement

import (
	"fmt"
	"testing"
)

// benchSnapshot is a cluster placing nodes new nodes over hosts hosts, with
// hard anti-affinity against 10 and soft anti-affinity against 10 other
// clusters that run one node on every seventh and every third host.
func benchSnapshot(hosts, nodes int) Snapshot {
	s := Snapshot{Cluster: "web", Add: nodes, Policy: Policy{Placement: Spread}}
	for i := range hosts {
		s.Hosts = append(s.Hosts, Host{Name: fmt.Sprintf("host-%04d", i), Labels: map[string]string{"zone": fmt.Sprint("z", i%3)}})
	}
	for c := range 20 {
		name := fmt.Sprintf("other-%02d", c)
		if c < 10 {
			s.Policy.HardAntiAffinity = append(s.Policy.HardAntiAffinity, name)
		} else {
			s.Policy.SoftAntiAffinity = append(s.Policy.SoftAntiAffinity, name)
		}
		step := 3
		if c < 10 {
			step = 7
		}
		for i := c % step; i < hosts; i += step * 10 {
			s.Instances = append(s.Instances, Instance{Cluster: name, Node: fmt.Sprintf("%s-%d", name, i), Host: s.Hosts[i].Name})
		}
	}
	s.Policy.Constraints = `labels.zone != ""`
	return s
}

// BenchmarkPlace10000Over1000 is the target (≤ 1 s): 10,000 new
// nodes over 1,000 hosts, hard and soft anti-affinity against 20 other
// clusters. The Grow variants show how cost grows with hosts and nodes
// (docs/benchmarks.md).
func BenchmarkPlace10000Over1000(b *testing.B) { benchPlace(b, 1000, 10000) }

func BenchmarkPlaceGrow(b *testing.B) {
	for _, c := range []struct{ hosts, nodes int }{{100, 10000}, {1000, 1000}, {1000, 100000}, {10000, 10000}} {
		b.Run(fmt.Sprintf("hosts=%d/nodes=%d", c.hosts, c.nodes), func(b *testing.B) { benchPlace(b, c.hosts, c.nodes) })
	}
}

func benchPlace(b *testing.B, hosts, nodes int) {
	s := benchSnapshot(hosts, nodes)
	b.ReportAllocs()
	for b.Loop() {
		d, err := Decide(s)
		if err != nil {
			b.Fatal(err)
		}
		if len(d.Place) != nodes {
			b.Fatalf("placed %d of %d: %s", len(d.Place), nodes, d.Refuse)
		}
	}
}
