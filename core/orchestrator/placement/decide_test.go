package placement

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
)

func f(v float64) *float64 { return &v }

func up(names ...string) []Host {
	out := make([]Host, len(names))
	for i, n := range names {
		out[i] = Host{Name: n}
	}
	return out
}

func with(hs []Host, name string, mod func(*Host)) []Host {
	hs = slices.Clone(hs)
	for i := range hs {
		if hs[i].Name == name {
			mod(&hs[i])
		}
	}
	return hs
}

func run(cluster, host string) Instance { return Instance{Cluster: cluster, Host: host} }

// ranking is the decision's ranked hosts, in order.
func ranking(d Decision) []string {
	var out []string
	for _, r := range d.Hosts {
		if r.Rank > 0 {
			out = append(out, r.Host)
		}
	}
	return out
}

func rowOf(t *testing.T, d Decision, host string) Row {
	t.Helper()
	for _, r := range d.Hosts {
		if r.Host == host {
			return r
		}
	}
	t.Fatalf("no row for %s in %+v", host, d.Hosts)
	return Row{}
}

func decide(t *testing.T, s Snapshot) Decision {
	t.Helper()
	if s.Cluster == "" {
		s.Cluster = "web"
	}
	d, err := Decide(s)
	if err != nil {
		t.Fatalf("Decide: %v", err)
	}
	return d
}

// spreadOrder is the expected spread ranking, computed independently:
// hosts sorted by the hex MD5 of cluster+host.
func spreadOrder(cluster string, hosts ...string) []string {
	out := slices.Clone(hosts)
	sum := func(h string) string { s := md5.Sum([]byte(cluster + h)); return hex.EncodeToString(s[:]) }
	sort.SliceStable(out, func(i, j int) bool { return sum(out[i]) < sum(out[j]) })
	return out
}

// TestPolicies: the six rankings of §A.2, each with the rule it follows
// where OpenSVC's two implementations disagree.
func TestPolicies(t *testing.T) {
	loads := func(hs []Host, l ...*float64) []Host {
		hs = slices.Clone(hs)
		for i := range hs {
			hs[i].Load = l[i]
		}
		return hs
	}
	three := up("a", "b", "c")
	for _, tc := range []struct {
		name string
		s    Snapshot
		want []string
		// dropped names a host left unranked and a word of its reason
		dropped map[string]string
	}{
		{"nodes order is the configured hosts list, the default", Snapshot{Hosts: three, Policy: Policy{Hosts: []string{"c", "a", "b"}}}, []string{"c", "a", "b"}, nil},
		{"nodes order without a list is the snapshot's order", Snapshot{Hosts: three, Policy: Policy{Placement: NodesOrder}}, []string{"a", "b", "c"}, nil},
		{"load avg ranks ascending 15-minute load", Snapshot{Hosts: loads(three, f(2), f(0.5), f(1)), Policy: Policy{Placement: LoadAvg}}, []string{"b", "c", "a"}, nil},
		{"load avg keeps the hosts order among equal loads", Snapshot{Hosts: loads(three, f(1), f(1), f(0)), Policy: Policy{Placement: LoadAvg}}, []string{"c", "a", "b"}, nil},
		{"load avg drops a host without load data (v2, not om3's empty ranking)", Snapshot{Hosts: loads(three, f(2), nil, f(1)), Policy: Policy{Placement: LoadAvg}},
			[]string{"c", "a"}, map[string]string{"b": "no load data"}},
		{"spread sorts by a real hash of cluster and host", Snapshot{Hosts: up("h1", "h2", "h3", "h4", "h5"), Policy: Policy{Placement: Spread}},
			spreadOrder("web", "h1", "h2", "h3", "h4", "h5"), nil},
		{"score ranks descending, a host without stats dropped (v2)", Snapshot{Policy: Policy{Placement: Score}, Hosts: []Host{
			{Name: "a", Load: f(1), MemAvail: f(50)},                   // 25
			{Name: "b", Load: f(0), MemAvail: f(40)},                   // 40
			{Name: "c", Load: f(0), MemAvail: f(80), SwapAvail: f(25)}, // 20
			{Name: "d", MemAvail: f(90)},                               // no load
		}}, []string{"b", "a", "c"}, map[string]string{"d": "no load or memory data"}},
		{"shift rotates by the slice index (v2: doubled list, window from index mod n)", Snapshot{Hosts: three, Slice: new(4)}, []string{"a", "b", "c"}, nil},
		{"none ranks nothing", Snapshot{Hosts: three, Policy: Policy{Placement: None}}, nil, map[string]string{"a": "ranks no host", "b": "ranks no host", "c": "ranks no host"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, tc.s)
			if got := ranking(d); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ranking = %v, want %v (rows %+v)", got, tc.want, d.Hosts)
			}
			for h, why := range tc.dropped {
				if r := rowOf(t, d, h); r.Rank != 0 || !strings.Contains(r.Reason, why) {
					t.Errorf("%s: rank %d reason %q, want unranked because %q", h, r.Rank, r.Reason, why)
				}
			}
		})
	}
}

func TestShiftWindows(t *testing.T) {
	hosts := up("a", "b", "c")
	for idx, want := range map[int][]string{0: {"a", "b", "c"}, 1: {"b", "c", "a"}, 2: {"c", "a", "b"}, 3: {"a", "b", "c"}, 5: {"c", "a", "b"}} {
		t.Run(fmt.Sprint("slice ", idx), func(t *testing.T) {
			d := decide(t, Snapshot{Hosts: hosts, Slice: &idx, Policy: Policy{Placement: Shift}})
			if got := ranking(d); !reflect.DeepEqual(got, want) {
				// om3 slices the undoubled list and shifts only past n: slice 1
				// would not move and slice 5 would fall off the list.
				t.Errorf("ranking = %v, want %v", got, want)
			}
		})
	}
	t.Run("the slice comes from the cluster's name N.name", func(t *testing.T) {
		d := decide(t, Snapshot{Cluster: "2.web", Hosts: hosts, Policy: Policy{Placement: Shift}})
		if got := ranking(d); !reflect.DeepEqual(got, []string{"c", "a", "b"}) {
			t.Errorf("ranking = %v", got)
		}
	})
}

// TestSpreadDiffersPerCluster: spread gives each cluster its own order, not
// om3's effectively lexical one.
func TestSpreadDiffersPerCluster(t *testing.T) {
	hosts := up("h1", "h2", "h3", "h4", "h5", "h6")
	orders := map[string]bool{}
	for _, c := range []string{"web", "db", "cache", "queue"} {
		d := decide(t, Snapshot{Cluster: c, Hosts: hosts, Policy: Policy{Placement: Spread}})
		orders[strings.Join(ranking(d), ",")] = true
		again := decide(t, Snapshot{Cluster: c, Hosts: hosts, Policy: Policy{Placement: Spread}})
		if !reflect.DeepEqual(ranking(d), ranking(again)) {
			t.Fatalf("spread is not stable for %s", c)
		}
	}
	if len(orders) < 2 || orders["h1,h2,h3,h4,h5,h6"] && len(orders) == 1 {
		t.Errorf("four clusters share one spread order: %v", orders)
	}
}

// TestFiltering: each discard of §A.3 in the order, with its
// reason and flag.
func TestFiltering(t *testing.T) {
	hosts := up("a", "b")
	for _, tc := range []struct {
		name   string
		s      Snapshot
		reason string
		flags  string
	}{
		{"down", Snapshot{Hosts: with(hosts, "b", func(h *Host) { h.State = StateDown })}, "down", ""},
		{"in maintenance", Snapshot{Hosts: with(hosts, "b", func(h *Host) { h.State = StateMaintenance })}, "in maintenance", ""},
		{"paused", Snapshot{Hosts: with(hosts, "b", func(h *Host) { h.Availability = Pause })}, "paused: it takes no new nodes", ""},
		{"draining", Snapshot{Hosts: with(hosts, "b", func(h *Host) { h.Availability = Drain })}, "draining: its nodes are moved away", ""},
		{"frozen is F", Snapshot{Hosts: with(hosts, "b", func(h *Host) { h.Frozen = true })}, "frozen", "F"},
		{"overloaded", Snapshot{Hosts: with(hosts, "b", func(h *Host) { h.Overloaded = true })}, "overloaded", ""},
		{"constraints false is C", Snapshot{Hosts: with(with(hosts, "a", func(h *Host) { h.Labels = map[string]string{"disk": "ssd"} }), "b", func(h *Host) { h.Labels = map[string]string{"disk": "hdd"} }),
			Policy: Policy{Constraints: `labels.disk == "ssd"`}}, "the constraints are false on it", "C"},
		{"a label the host lacks reads empty", Snapshot{Hosts: with(hosts, "a", func(h *Host) { h.Labels = map[string]string{"gpu": "1"} }),
			Policy: Policy{Constraints: `labels.gpu != ""`}}, "the constraints are false on it", "C"},
		{"hard affinity without the cluster is A", Snapshot{Hosts: hosts, Instances: []Instance{run("db", "a")}, Policy: Policy{HardAffinity: []string{"db"}}}, "hard affinity: no running node of db", "A"},
		{"hard anti-affinity with the cluster running is A", Snapshot{Hosts: hosts, Instances: []Instance{run("cache", "b")}, Policy: Policy{HardAntiAffinity: []string{"cache"}}}, "hard anti-affinity: cache runs here", "A"},
		{"a host the policy lists but the driver does not report", Snapshot{Hosts: up("a"), Policy: Policy{Hosts: []string{"a", "b"}}}, "not a host the driver reports", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, tc.s)
			r := rowOf(t, d, "b")
			if r.Rank != 0 || r.Reason != tc.reason || strings.Trim(r.Flags, "L") != tc.flags {
				t.Errorf("b = %+v, want discarded because %q with flags %q", r, tc.reason, tc.flags)
			}
			if a := rowOf(t, d, "a"); a.Rank != 1 || a.Reason != "" || d.Leader != "a" {
				t.Errorf("a = %+v leader %q, want the lone candidate and leader", a, d.Leader)
			}
		})
	}
	t.Run("every failing check is reported, in the issue's order", func(t *testing.T) {
		d := decide(t, Snapshot{Hosts: []Host{{Name: "a"}, {Name: "b", State: StateDown, Availability: Drain, Frozen: true, Overloaded: true, Labels: map[string]string{"zone": "x"}}},
			Instances: []Instance{run("cache", "b")}, Policy: Policy{Constraints: `labels.zone == "y"`, HardAffinity: []string{"db"}, HardAntiAffinity: []string{"cache"}}})
		r := rowOf(t, d, "b")
		want := "down; draining: its nodes are moved away; frozen; overloaded; the constraints are false on it; hard affinity: no running node of db; hard anti-affinity: cache runs here"
		if r.Reason != want || r.Flags != "ACF" {
			t.Errorf("b = %+v\nwant reason %q flags ACF", r, want)
		}
	})
}

// TestHardAffinity: satisfied only by a running instance of every listed
// cluster on that host (the seed's wording; v2 would skip a cluster with
// no data on the host).
func TestHardAffinity(t *testing.T) {
	hosts := up("a", "b", "c", "d")
	s := Snapshot{Hosts: hosts, Policy: Policy{HardAffinity: []string{"db", "queue"}}, Instances: []Instance{
		run("db", "a"), run("queue", "a"), // a: both running
		run("db", "b"),                                                         // b: queue has no instance here
		run("db", "c"), {Cluster: "queue", Host: "c", State: InstanceStarting}, // c: queue only starting
		{Cluster: "db", Host: "d", State: InstanceFailed}, run("queue", "d"), // d: db failed
	}}
	d := decide(t, s)
	if got := ranking(d); !reflect.DeepEqual(got, []string{"a"}) {
		t.Errorf("ranking = %v, want only a", got)
	}
	for h, missing := range map[string]string{"b": "queue", "c": "queue", "d": "db"} {
		if r := rowOf(t, d, h); r.Reason != "hard affinity: no running node of "+missing || r.Flags != strings.TrimSpace("A"+map[bool]string{true: "L", false: ""}[h == "a"]) {
			t.Errorf("%s = %+v", h, r)
		}
	}
	t.Run("hard anti-affinity ignores a node that is not running", func(t *testing.T) {
		d := decide(t, Snapshot{Hosts: up("a", "b"), Policy: Policy{HardAntiAffinity: []string{"cache"}},
			Instances: []Instance{{Cluster: "cache", Host: "a", State: InstanceStopped}, {Cluster: "cache", Host: "b", State: InstanceStarting}}})
		if got := ranking(d); !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Errorf("ranking = %v", got)
		}
	})
}

// TestSoftAffinities: soft affinities reorder only with at least two
// candidates; "counts as up" includes starting (§A.4).
func TestSoftAffinities(t *testing.T) {
	hosts := up("a", "b", "c")
	for _, tc := range []struct {
		name string
		s    Snapshot
		want []string
	}{
		{"soft affinity moves hosts running the cluster to the front", Snapshot{Hosts: hosts, Policy: Policy{SoftAffinity: []string{"db"}},
			Instances: []Instance{run("db", "c")}}, []string{"c", "a", "b"}},
		{"a starting node counts as up for soft affinity", Snapshot{Hosts: hosts, Policy: Policy{SoftAffinity: []string{"db"}},
			Instances: []Instance{{Cluster: "db", Host: "b", State: InstanceStarting}}}, []string{"b", "a", "c"}},
		{"soft anti-affinity moves hosts without the cluster to the front", Snapshot{Hosts: hosts, Policy: Policy{SoftAntiAffinity: []string{"cache"}},
			Instances: []Instance{run("cache", "a")}}, []string{"b", "c", "a"}},
		{"the alphabetically first cluster has the final word", Snapshot{Hosts: hosts, Policy: Policy{SoftAffinity: []string{"zeta", "alpha"}},
			Instances: []Instance{run("zeta", "b"), run("alpha", "c")}}, []string{"c", "b", "a"}},
		{"soft affinity applies after the policy ranking", Snapshot{Hosts: []Host{{Name: "a", Load: f(0.1)}, {Name: "b", Load: f(3)}, {Name: "c", Load: f(2)}},
			Policy: Policy{Placement: LoadAvg, SoftAffinity: []string{"db"}}, Instances: []Instance{run("db", "b"), run("db", "c")}}, []string{"c", "b", "a"}},
		{"an affinity outweighs an anti-affinity", Snapshot{Hosts: hosts, Policy: Policy{SoftAffinity: []string{"db"}, SoftAntiAffinity: []string{"cache"}},
			Instances: []Instance{run("db", "b"), run("cache", "b")}}, []string{"b", "a", "c"}},
		{"soft affinities are ignored with a single candidate", Snapshot{Hosts: with(hosts, "a", func(h *Host) { h.State = StateDown }),
			Policy: Policy{SoftAntiAffinity: []string{"cache"}, HardAffinity: []string{"db"}}, Instances: []Instance{run("db", "b"), run("cache", "b")}}, []string{"b"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, tc.s)
			if got := ranking(d); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ranking = %v, want %v", got, tc.want)
			}
		})
	}
	t.Run("with a single candidate the soft rule does not refuse it", func(t *testing.T) {
		// The seed: "If the local node is not the only candidate, the
		// orchestrator won't propose to start ..." — alone, it starts.
		d := decide(t, Snapshot{Hosts: up("a"), Policy: Policy{SoftAffinity: []string{"db"}}, Add: 1})
		if d.Leader != "a" || !reflect.DeepEqual(d.Place, []string{"a"}) {
			t.Errorf("leader %q place %v", d.Leader, d.Place)
		}
	})
}

// TestSeedTwoNodeTable replays the flag rows of the seed's two-node table
// (§A.8): A, C and F discard a node; L is the natural rank-0 node; the
// leader is the first surviving candidate; a lone survivor leads without L.
func TestSeedTwoNodeTable(t *testing.T) {
	mark := func(s *Snapshot, host, flag string) {
		switch flag {
		case "A":
			s.Policy.HardAntiAffinity = []string{"other"}
			s.Instances = append(s.Instances, run("other", host))
		case "C":
			s.Policy.Constraints = `labels.ok != "no"`
			s.Hosts = with(s.Hosts, host, func(h *Host) { h.Labels = map[string]string{"ok": "no"} })
		case "F":
			s.Hosts = with(s.Hosts, host, func(h *Host) { h.Frozen = true })
		}
	}
	for _, a := range []string{"", "A", "C", "F"} {
		for _, b := range []string{"", "A", "C", "F"} {
			name := fmt.Sprintf("down idle %sL | down idle %s", a, b)
			t.Run(name, func(t *testing.T) {
				s := Snapshot{Cluster: "svc", Hosts: up("A", "B")}
				mark(&s, "A", a)
				mark(&s, "B", b)
				d := decide(t, s)
				want := ""
				switch {
				case a == "":
					want = "A" // Node A: idle => ready
				case b == "":
					want = "B" // Node B: idle => ready
				}
				if d.Leader != want {
					t.Errorf("leader = %q, want %q (rows %+v)", d.Leader, want, d.Hosts)
				}
				if d.NaturalLeader != "A" || rowOf(t, d, "A").Flags != a+"L" || rowOf(t, d, "B").Flags != b {
					t.Errorf("flags A=%q B=%q natural %q, want %q and %q", rowOf(t, d, "A").Flags, rowOf(t, d, "B").Flags, d.NaturalLeader, a+"L", b)
				}
			})
		}
	}
}

// TestLoneCandidateLeads: a lone candidate leads without being ranked
// (v2's short-circuit), even under load avg without load data; with two,
// the one without data is dropped.
func TestLoneCandidateLeads(t *testing.T) {
	d := decide(t, Snapshot{Hosts: []Host{{Name: "a"}, {Name: "b", State: StateDown, Load: f(0)}}, Policy: Policy{Placement: LoadAvg}, Add: 1})
	if d.Leader != "a" || !reflect.DeepEqual(d.Place, []string{"a"}) {
		t.Errorf("leader %q place %v", d.Leader, d.Place)
	}
	d = decide(t, Snapshot{Hosts: []Host{{Name: "a"}, {Name: "b", Load: f(5)}}, Policy: Policy{Placement: LoadAvg}, Add: 1})
	if d.Leader != "b" || rowOf(t, d, "a").Rank != 0 {
		t.Errorf("leader %q rows %+v", d.Leader, d.Hosts)
	}
}

// TestPlace: new nodes go to the ranked host with the fewest of the
// cluster's nodes, the better ranked among equals.
func TestPlace(t *testing.T) {
	for _, tc := range []struct {
		name   string
		s      Snapshot
		want   []string
		refuse string
	}{
		{"n nodes on the first n ranked hosts", Snapshot{Hosts: up("a", "b", "c", "d"), Add: 2, Policy: Policy{Hosts: []string{"c", "a", "b", "d"}}}, []string{"c", "a"}, ""},
		{"more nodes than hosts wrap in rank order", Snapshot{Hosts: up("a", "b"), Add: 5}, []string{"a", "b", "a", "b", "a"}, ""},
		{"hosts with fewer of the cluster's nodes first", Snapshot{Hosts: up("a", "b", "c"), Add: 3, Instances: []Instance{run("web", "a"), run("web", "a"), run("web", "b")}}, []string{"c", "b", "c"}, ""},
		{"a cluster in its own hard anti-affinity takes one node per host", Snapshot{Hosts: up("a", "b", "c"), Add: 3, Policy: Policy{HardAntiAffinity: []string{"web"}},
			Instances: []Instance{run("web", "a")}}, []string{"b", "c"}, "one node per host: 2 of 3"},
		{"no candidate refuses with every host's reason", Snapshot{Hosts: []Host{{Name: "a", State: StateDown}, {Name: "b", Availability: Pause}}, Add: 1}, nil,
			"no host can take a new node: a: down; b: paused: it takes no new nodes"},
		{"discarded hosts get none", Snapshot{Hosts: with(up("a", "b", "c"), "a", func(h *Host) { h.Availability = Drain }), Add: 2}, []string{"b", "c"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, tc.s)
			if !reflect.DeepEqual(d.Place, tc.want) || !strings.Contains(d.Refuse, tc.refuse) || (tc.refuse == "") != (d.Refuse == "") {
				t.Errorf("place %v refuse %q, want %v refuse %q", d.Place, d.Refuse, tc.want, tc.refuse)
			}
		})
	}
	t.Run("placement none leaves the new nodes to the driver", func(t *testing.T) {
		d := decide(t, Snapshot{Hosts: up("a"), Add: 2, Policy: Policy{Placement: None}})
		if d.Place != nil || d.Refuse != "" || !strings.Contains(d.Note, "the driver places the new nodes itself") || d.Leader != "" {
			t.Errorf("%+v", d)
		}
	})
}

// TestVictims: nodes leave hosts outside the ranking first (gone, then
// draining, then overloaded), then the ranked host with the most of the
// cluster's nodes, the worst ranked among equals.
func TestVictims(t *testing.T) {
	node := func(n, h string) Instance { return Instance{Cluster: "web", Node: n, Host: h} }
	for _, tc := range []struct {
		name string
		s    Snapshot
		want []string // node names
	}{
		{"worst-ranked hosts first", Snapshot{Hosts: up("a", "b", "c"), Remove: 2, Instances: []Instance{node("n1", "a"), node("n2", "b"), node("n3", "c")}}, []string{"n3", "n2"}},
		{"the host with the most nodes gives first", Snapshot{Hosts: up("a", "b", "c"), Remove: 2,
			Instances: []Instance{node("n1", "a"), node("n2", "a"), node("n3", "a"), node("n4", "b"), node("n5", "c")}}, []string{"n3", "n2"}},
		{"gone, draining and overloaded hosts first, in that order", Snapshot{Hosts: []Host{{Name: "a"}, {Name: "o", Overloaded: true}, {Name: "d", Availability: Drain}, {Name: "x", State: StateDown}}, Remove: 4,
			Instances: []Instance{node("n1", "a"), node("n2", "o"), node("n3", "d"), node("n4", "x"), node("n5", "gone")}}, []string{"n5", "n4", "n3", "n2"}},
		{"a node that is not running leaves first", Snapshot{Hosts: up("a"), Remove: 1,
			Instances: []Instance{node("n1", "a"), {Cluster: "web", Node: "n2", Host: "a", State: InstanceFailed}, node("n3", "a")}}, []string{"n2"}},
		{"other clusters' nodes never leave", Snapshot{Hosts: up("a", "b"), Remove: 1, Instances: []Instance{node("n1", "a"), {Cluster: "db", Node: "d1", Host: "b"}}}, []string{"n1"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := decide(t, tc.s)
			var got []string
			for _, v := range d.Victims {
				got = append(got, v.Node)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Errorf("victims %v, want %v (%+v)", got, tc.want, d.Victims)
			}
		})
	}
	t.Run("removal undoes placement", func(t *testing.T) {
		s := Snapshot{Cluster: "web", Hosts: up("a", "b", "c"), Add: 7}
		d := decide(t, s)
		var ins []Instance
		for i, h := range d.Place {
			ins = append(ins, Instance{Cluster: "web", Node: fmt.Sprint("n", i), Host: h})
		}
		d = decide(t, Snapshot{Hosts: s.Hosts, Instances: ins, Remove: 4})
		left := map[string]int{}
		gone := map[string]bool{}
		for _, v := range d.Victims {
			gone[v.Node] = true
		}
		for _, in := range ins {
			if !gone[in.Node] {
				left[in.Host]++
			}
		}
		if !reflect.DeepEqual(left, map[string]int{"a": 1, "b": 1, "c": 1}) {
			t.Errorf("left %v after %v", left, d.Victims)
		}
	})
	t.Run("too few nodes is a refusal", func(t *testing.T) {
		d := decide(t, Snapshot{Hosts: up("a"), Remove: 2, Instances: []Instance{node("n1", "a")}})
		if len(d.Victims) != 1 || !strings.Contains(d.Refuse, "only 1 of the cluster's nodes can be removed; 2 were asked for") {
			t.Errorf("%+v", d)
		}
	})
}

// TestGlobal: SwarmKit's global orchestrator (§B.4).
func TestGlobal(t *testing.T) {
	node := func(n, h, st string) Instance { return Instance{Cluster: "web", Node: n, Host: h, State: st} }
	for _, tc := range []struct {
		name     string
		s        Snapshot
		create   []string
		shutdown []string
	}{
		{"one node per eligible host; a host that appears gets one", Snapshot{Hosts: up("a", "b", "c"), Instances: []Instance{node("n1", "a", "")}}, []string{"b", "c"}, nil},
		{"drained or down hosts have their nodes shut down, not replaced", Snapshot{Hosts: []Host{{Name: "a", Availability: Drain}, {Name: "b", State: StateDown}, {Name: "c"}},
			Instances: []Instance{node("n1", "a", ""), node("n2", "b", ""), node("n3", "c", "")}}, []string{}, []string{"n1", "n2"}},
		{"a removed host's node is shut down", Snapshot{Hosts: up("a"), Instances: []Instance{node("n1", "a", ""), node("n2", "gone", "")}}, []string{}, []string{"n2"}},
		{"a new node on a host that went down is shut down", Snapshot{Hosts: []Host{{Name: "a", State: StateDown}}, Instances: []Instance{node("n1", "a", InstanceStarting)}}, []string{}, []string{"n1"}},
		{"a host failing the constraints has its node shut down", Snapshot{Hosts: []Host{{Name: "a", Labels: map[string]string{"role": "db"}}, {Name: "b", Labels: map[string]string{"role": "web"}}},
			Policy: Policy{Constraints: `labels.role == "web"`}, Instances: []Instance{node("n1", "a", "")}}, []string{"b"}, []string{"n1"}},
		{"pause adds nothing and keeps a running node", Snapshot{Hosts: []Host{{Name: "a", Availability: Pause}, {Name: "b", Availability: Pause}},
			Instances: []Instance{node("n1", "a", "")}}, []string{}, nil},
		{"a node that fails while paused is shut down, not restarted", Snapshot{Hosts: []Host{{Name: "a", Availability: Pause}}, Instances: []Instance{node("n1", "a", InstanceFailed)}}, []string{}, []string{"n1"}},
		{"a failed node on an active host is replaced there", Snapshot{Hosts: up("a"), Instances: []Instance{node("n1", "a", InstanceFailed)}}, []string{"a"}, []string{"n1"}},
		{"extra nodes on a host are shut down", Snapshot{Hosts: up("a"), Instances: []Instance{node("n1", "a", ""), node("n2", "a", InstanceStarting)}}, []string{}, []string{"n2"}},
		{"maintenance and frozen hosts are left alone", Snapshot{Hosts: []Host{{Name: "a", State: StateMaintenance}, {Name: "b", Frozen: true}, {Name: "c", State: StateMaintenance}},
			Instances: []Instance{node("n1", "a", InstanceFailed), node("n2", "b", "")}}, []string{}, nil},
		{"hosts outside the policy's list are not eligible", Snapshot{Hosts: up("a", "b"), Policy: Policy{Hosts: []string{"a"}}, Instances: []Instance{node("n1", "b", "")}}, []string{"a"}, []string{"n1"}},
		{"other clusters' nodes are not this cluster's", Snapshot{Hosts: up("a"), Instances: []Instance{{Cluster: "db", Node: "d1", Host: "a"}}}, []string{"a"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tc.s.Global = true
			d := decide(t, tc.s)
			var shut []string
			for _, v := range d.Global.Shutdown {
				shut = append(shut, v.Node)
			}
			if !reflect.DeepEqual(d.Global.Create, tc.create) || !reflect.DeepEqual(shut, tc.shutdown) {
				t.Errorf("create %v shutdown %v, want %v and %v (%+v)", d.Global.Create, shut, tc.create, tc.shutdown, d.Global.Shutdown)
			}
		})
	}
}

// TestBadInput: each mistake is an error naming the field and the rule.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		name, json, want string
	}{
		{"unknown field", `{"cluster":"web","hots":[]}`, `unknown field "hots"`},
		{"unknown nested field", `{"cluster":"web","hosts":[{"name":"a","lod":1}]}`, `unknown field "lod"`},
		{"unknown policy", `{"cluster":"web","policy":{"placement":"random"}}`, `policy.placement: "random" is not a placement policy`},
		{"bad constraint", `{"cluster":"web","policy":{"constraints":"labels.zone =="}}`, `policy.constraints: the expression does not compile`},
		{"constraint not boolean", `{"cluster":"web","policy":{"constraints":"labels.zone"}}`, `policy.constraints: `},
		{"constraint unknown name", `{"cluster":"web","policy":{"constraints":"zone == \"a\""}}`, `unknown name zone`},
		{"wrong type", `{"cluster":"web","hosts":[{"name":"a","load":"high"}]}`, `hosts.load must be a JSON value of Go type float64, not a JSON string`},
		{"bad state", `{"cluster":"web","hosts":[{"name":"a","state":"sleeping"}]}`, `hosts[0].state: "sleeping" is not a host state`},
		{"bad availability", `{"cluster":"web","hosts":[{"name":"a","availability":"off"}]}`, `hosts[0].availability: "off" is not an availability`},
		{"duplicate host", `{"cluster":"web","hosts":[{"name":"a"},{"name":"a"}]}`, `hosts[1].name: the host "a" is listed twice`},
		{"no cluster", `{"hosts":[]}`, `cluster: the name of the cluster being placed is required`},
		{"add and remove", `{"cluster":"web","add":1,"remove":1}`, `remove: a decision either adds nodes or removes them`},
		{"instance without host", `{"cluster":"web","instances":[{"cluster":"db"}]}`, `instances[0].host: every instance names its host`},
		{"wanted and refused", `{"cluster":"web","policy":{"hard_affinity":["db"],"hard_anti_affinity":["db"]}}`, `policy.hard_anti_affinity[0]: the cluster "db" is also in the affinity list`},
		{"trailing data", `{"cluster":"web"} {}`, `more follows it`},
		{"not JSON", `{"cluster":`, `reading the snapshot`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Decode(strings.NewReader(tc.json))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Decode(%s) = %v, want an error with %q", tc.json, err, tc.want)
			}
		})
	}
	t.Run("a field error is a FieldError", func(t *testing.T) {
		err := ValidatePolicy(Policy{Placement: "best"})
		var fe *FieldError
		if !errors.As(err, &fe) || fe.Field != "placement" {
			t.Errorf("%v", err)
		}
	})
}
