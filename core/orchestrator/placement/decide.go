package placement

import (
	"cmp"
	"container/heap"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/expr-lang/expr/vm"
)

// Row is one host of a decision: its rank among the candidates, the flags
// OpenSVC shows (A a hard affinity violation, C a constraints violation, F
// frozen, L the natural placement leader) and why it is not ranked.
type Row struct {
	Host string `json:"host"`
	// Rank is the host's place among the ranked candidates, from 1; 0 when
	// the host is discarded or the policy does not rank it.
	Rank   int    `json:"rank"`
	Flags  string `json:"flags"`
	Reason string `json:"reason,omitempty"`
	// Nodes is how many of the cluster's nodes the host runs now.
	Nodes int `json:"nodes"`
}

// Victim is a node chosen to leave, with why.
type Victim struct {
	Node   string `json:"node"`
	Host   string `json:"host"`
	Reason string `json:"reason"`
}

// Global is the global mode's decision (§B.4): the hosts that get a node,
// and the nodes shut down and not replaced.
type Global struct {
	Create   []string `json:"create"`
	Shutdown []Victim `json:"shutdown"`
}

// Decision is what Decide found: every host with its rank and flags, the
// leaders, and what to do.
type Decision struct {
	Placement string `json:"placement"`
	// Hosts are the ranked candidates in rank order, then the other hosts
	// in the policy's order.
	Hosts []Row `json:"hosts"`
	// Leader is the placement leader: the first ranked candidate (a lone
	// candidate leads even when the policy would not rank it, §A.3).
	Leader string `json:"leader,omitempty"`
	// NaturalLeader ranks first over every host, ignoring discards: the L
	// flag, the host `orchestrate start` waits for (§A.5).
	NaturalLeader string `json:"natural_leader,omitempty"`
	// Place is the host of each new node, in order.
	Place []string `json:"place,omitempty"`
	// Victims are the nodes to remove, worst placed first.
	Victims []Victim `json:"victims,omitempty"`
	Global  *Global  `json:"global,omitempty"`
	// Refuse says why the decision cannot be carried out (no host can take
	// a new node); the ranking is still there to explain it.
	Refuse string `json:"refuse,omitempty"`
	// Note says something the operator should know: placement none leaves
	// the choice to the driver.
	Note string `json:"note,omitempty"`
}

// entry is a host during one decision.
type entry struct {
	name    string
	host    *Host // nil: a host the policy lists but the snapshot lacks
	order   int   // position in the policy's host order
	reasons []string
	flags   flagSet
	rank    int
	own     []Instance // this cluster's instances on the host
	digest  string     // spread's hash, computed once
	score   float64
	stray   bool // a host of the cluster's nodes that is not a peer
}

type flagSet struct{ a, c, f, l bool }

func (f flagSet) String() string {
	var b strings.Builder
	for _, x := range []struct {
		on bool
		c  byte
	}{{f.a, 'A'}, {f.c, 'C'}, {f.f, 'F'}, {f.l, 'L'}} {
		if x.on {
			b.WriteByte(x.c)
		}
	}
	return b.String()
}

// presence is what runs of each cluster on one host.
type presence map[string]uint8

const (
	runs   uint8 = 1 << iota // a running instance
	counts                   // running or starting: "counts as up" for soft affinities
)

// Decide filters, ranks and decides over a snapshot. It validates the
// snapshot first; an invalid one is the only error.
func Decide(s Snapshot) (Decision, error) {
	if err := s.Validate(); err != nil {
		return Decision{}, err
	}
	prog, err := compileConstraints(s.Policy.Constraints)
	if err != nil {
		return Decision{}, fieldErr("policy.constraints", "%v", err)
	}
	policy := cmp.Or(s.Policy.Placement, NodesOrder)

	// Index instances by host once: each check below is then a map lookup,
	// so a decision costs O(hosts + instances), not hosts × instances.
	byHost := make(map[string]presence, len(s.Hosts))
	own := map[string][]Instance{}
	for _, in := range s.Instances {
		if in.Cluster == s.Cluster {
			own[in.Host] = append(own[in.Host], in)
		}
		p := byHost[in.Host]
		if p == nil {
			p = presence{}
			byHost[in.Host] = p
		}
		switch cmp.Or(in.State, InstanceRunning) {
		case InstanceRunning:
			p[in.Cluster] |= runs | counts
		case InstanceStarting:
			p[in.Cluster] |= counts
		}
	}

	hosts := make(map[string]*Host, len(s.Hosts))
	for i := range s.Hosts {
		hosts[s.Hosts[i].Name] = &s.Hosts[i]
	}
	names := s.Policy.Hosts
	if len(names) == 0 {
		names = make([]string, len(s.Hosts))
		for i, h := range s.Hosts {
			names[i] = h.Name
		}
	}
	peers := make([]*entry, len(names))
	for i, n := range names {
		e := &entry{name: n, host: hosts[n], order: i, own: own[n]}
		filter(e, s.Policy, prog, byHost[n])
		peers[i] = e
	}

	d := Decision{Placement: policy}
	// The natural leader ranks first over every known peer, discards
	// ignored (v2 ranks svc.peers for it).
	known := make([]*entry, 0, len(peers))
	for _, e := range peers {
		if e.host != nil {
			known = append(known, e)
		}
	}
	natural, _ := rank(policy, s, known)
	if len(natural) > 0 {
		natural[0].flags.l = true
		d.NaturalLeader = natural[0].name
	}

	var candidates []*entry
	for _, e := range peers {
		if len(e.reasons) == 0 {
			candidates = append(candidates, e)
		}
	}
	var ranked []*entry
	if len(candidates) == 1 && policy != None {
		// A lone candidate leads without being ranked: v2's short-circuit,
		// which also skips soft affinities (§A.3).
		ranked = candidates
	} else {
		var dropped map[*entry]string
		ranked, dropped = rank(policy, s, candidates)
		for e, why := range dropped {
			e.reasons = append(e.reasons, why)
		}
		if len(ranked) >= 2 {
			ranked = softAffinities(ranked, s.Policy, byHost)
		}
	}
	for i, e := range ranked {
		e.rank = i + 1
	}
	if len(ranked) > 0 {
		d.Leader = ranked[0].name
	}

	d.Hosts = make([]Row, 0, len(peers))
	for _, e := range ranked {
		d.Hosts = append(d.Hosts, row(e))
	}
	for _, e := range peers {
		if e.rank == 0 {
			d.Hosts = append(d.Hosts, row(e))
		}
	}
	// This cluster's nodes on hosts outside the peers still count: they are
	// the first to leave.
	var strays []*entry
	for h, ins := range own {
		if !slices.Contains(names, h) {
			why := "not one of the policy's hosts"
			if hosts[h] == nil {
				why = "not a host the driver reports"
			}
			strays = append(strays, &entry{name: h, host: hosts[h], own: ins, reasons: []string{why}, order: len(names), stray: true})
		}
	}
	sort.Slice(strays, func(i, j int) bool { return strays[i].name < strays[j].name })

	switch {
	case s.Global:
		d.Global = global(peers, strays)
	case s.Add > 0 && policy == None:
		d.Note = "placement none ranks no host: the driver places the new nodes itself"
	case s.Add > 0:
		d.Place, d.Refuse = place(ranked, peers, s.Add, slices.Contains(s.Policy.HardAntiAffinity, s.Cluster))
	case s.Remove > 0:
		d.Victims = victims(ranked, append(peers, strays...), s.Remove)
		if len(d.Victims) < s.Remove {
			d.Refuse = fmt.Sprintf("only %d of the cluster's nodes can be removed; %d were asked for", len(d.Victims), s.Remove)
		}
	}
	return d, nil
}

func row(e *entry) Row {
	return Row{Host: e.name, Rank: e.rank, Flags: e.flags.String(), Reason: strings.Join(e.reasons, "; "), Nodes: len(e.own)}
}

// filter records every reason the host cannot take a new node, in the
// issue's order: down, maintenance, paused or draining, frozen,
// overloaded, constraints, hard affinity and anti-affinity (§A.3).
func filter(e *entry, p Policy, prog *vm.Program, here presence) {
	h := e.host
	if h == nil {
		e.reasons = append(e.reasons, "not a host the driver reports")
		return
	}
	switch h.State {
	case StateDown:
		e.reasons = append(e.reasons, "down")
	case StateMaintenance:
		e.reasons = append(e.reasons, "in maintenance")
	}
	switch h.Availability {
	case Pause:
		e.reasons = append(e.reasons, "paused: it takes no new nodes")
	case Drain:
		e.reasons = append(e.reasons, "draining: its nodes are moved away")
	}
	if h.Frozen {
		e.flags.f = true
		e.reasons = append(e.reasons, "frozen")
	}
	if h.Overloaded {
		e.reasons = append(e.reasons, "overloaded")
	}
	if prog != nil {
		ok, err := satisfies(prog, h)
		switch {
		case err != nil:
			e.flags.c = true
			e.reasons = append(e.reasons, "the constraints fail on it: "+err.Error())
		case !ok:
			e.flags.c = true
			e.reasons = append(e.reasons, "the constraints are false on it")
		}
	}
	// Hard affinity holds only with a running node of every listed cluster
	// here: the seed's "all specified services ... have a local running
	// instance" (v2 skips a cluster with no data on the host; the issue
	// follows the seed).
	var missing, present []string
	for _, c := range p.HardAffinity {
		if here[c]&runs == 0 {
			missing = append(missing, c)
		}
	}
	for _, c := range p.HardAntiAffinity {
		if here[c]&runs != 0 {
			present = append(present, c)
		}
	}
	if len(missing) > 0 {
		e.flags.a = true
		e.reasons = append(e.reasons, "hard affinity: no running node of "+strings.Join(missing, ", "))
	}
	if len(present) > 0 {
		e.flags.a = true
		e.reasons = append(e.reasons, "hard anti-affinity: "+strings.Join(present, ", ")+" runs here")
	}
}

// rank orders entries (given in the policy's host order) by the policy
// (§A.2) and says why each one left out is not ranked.
func rank(policy string, s Snapshot, in []*entry) ([]*entry, map[*entry]string) {
	out := slices.Clone(in)
	dropped := map[*entry]string{}
	drop := func(keep func(*entry) bool, why string) {
		out = slices.DeleteFunc(out, func(e *entry) bool {
			if keep(e) {
				return false
			}
			dropped[e] = why
			return true
		})
	}
	switch policy {
	case NodesOrder:
	case LoadAvg:
		// Ascending 15-minute load; a host without the figure cannot be
		// compared and is dropped (v2; om3 ranks nothing, §A.2).
		drop(func(e *entry) bool { return e.host.Load != nil }, "no load data: load avg ranks only hosts that report their load")
		slices.SortStableFunc(out, func(a, b *entry) int { return cmp.Compare(*a.host.Load, *b.host.Load) })
	case Spread:
		// A real hash of cluster and host, so each cluster gets its own
		// stable pseudo-random order (om3 appends the empty digest instead,
		// which sorts lexically, §A.2). MD5 is v2's choice; it needs no
		// resistance to attack here, only spread.
		for _, e := range out {
			if e.digest == "" {
				sum := md5.Sum([]byte(s.Cluster + e.name))
				e.digest = hex.EncodeToString(sum[:])
			}
		}
		slices.SortStableFunc(out, func(a, b *entry) int { return strings.Compare(a.digest, b.digest) })
	case Score:
		// Descending score; v2 drops a host without stats (om3 counts it
		// as 0, which would rank an unknown host above a busy one).
		drop(func(e *entry) bool { return e.host.Load != nil && e.host.MemAvail != nil }, "no load or memory data: score ranks only hosts that report both")
		for _, e := range out {
			e.score = HostScore(*e.host)
		}
		slices.SortStableFunc(out, func(a, b *entry) int { return cmp.Compare(b.score, a.score) })
	case Shift:
		// v2's rule: the host order doubled, a window of n from slice mod n,
		// which is a rotation (om3 shifts only past n and does not double).
		if n := len(out); n > 0 {
			k := s.SliceIndex() % n
			out = append(out[k:], out[:k]...)
		}
	case None:
		drop(func(*entry) bool { return false }, "placement none ranks no host")
	}
	return out, dropped
}

// HostScore is the composite `score` ranks by, higher first: free memory,
// scaled down by swap pressure and by load. A host without swap is not
// short of it.
func HostScore(h Host) float64 {
	if h.Load == nil || h.MemAvail == nil {
		return 0
	}
	swap := 100.0
	if h.SwapAvail != nil {
		swap = *h.SwapAvail
	}
	return *h.MemAvail * (swap / 100) / (1 + *h.Load)
}

// softAffinities reorders ranked candidates (§A.4): for each listed
// cluster, in reverse-sorted order, the hosts where it counts as up move
// to the front (soft affinity) or the hosts where it does not (soft
// anti-affinity), stably. Anti-affinities go first so that an affinity,
// applied last, has the final word.
func softAffinities(in []*entry, p Policy, byHost map[string]presence) []*entry {
	out := in
	front := func(list []string, want bool) {
		sorted := slices.Clone(list)
		slices.Sort(sorted)
		slices.Reverse(sorted)
		for _, c := range sorted {
			var yes, no []*entry
			for _, e := range out {
				if (byHost[e.name][c]&counts != 0) == want {
					yes = append(yes, e)
				} else {
					no = append(no, e)
				}
			}
			out = append(yes, no...)
		}
	}
	front(p.SoftAntiAffinity, false)
	front(p.SoftAffinity, true)
	return out
}

// slot is a host in the heaps of place and victims.
type slot struct {
	e     *entry
	count int
}

type slotHeap struct {
	s    []slot
	less func(a, b slot) bool
}

func (h *slotHeap) Len() int           { return len(h.s) }
func (h *slotHeap) Less(i, j int) bool { return h.less(h.s[i], h.s[j]) }
func (h *slotHeap) Swap(i, j int)      { h.s[i], h.s[j] = h.s[j], h.s[i] }
func (h *slotHeap) Push(x any)         { h.s = append(h.s, x.(slot)) }
func (h *slotHeap) Pop() any {
	x := h.s[len(h.s)-1]
	h.s = h.s[:len(h.s)-1]
	return x
}

// place picks a host for each of n new nodes: the ranked candidate with
// the fewest of the cluster's nodes, the better ranked among equals. With
// one node per host and none yet, the nodes land on the first n ranked
// hosts, OpenSVC's optimal placement (§A.1). A cluster listed in its own
// hard anti-affinity takes at most one node per host. A heap keeps this
// O(n log hosts).
func place(ranked, peers []*entry, n int, onePerHost bool) ([]string, string) {
	if len(ranked) == 0 {
		return nil, "no host can take a new node: " + discards(peers)
	}
	h := &slotHeap{less: func(a, b slot) bool {
		if a.count != b.count {
			return a.count < b.count
		}
		return a.e.rank < b.e.rank
	}}
	for _, e := range ranked {
		h.s = append(h.s, slot{e: e, count: len(e.own)})
	}
	heap.Init(h)
	out := make([]string, 0, n)
	for len(out) < n && h.Len() > 0 {
		s := heap.Pop(h).(slot)
		out = append(out, s.e.name)
		if !onePerHost {
			s.count++
			heap.Push(h, s)
		}
	}
	if len(out) < n {
		return out, fmt.Sprintf("the cluster's own hard anti-affinity allows one node per host: %d of %d new nodes found a host", len(out), n)
	}
	return out, ""
}

// discards summarises why the peers are not candidates.
func discards(peers []*entry) string {
	if len(peers) == 0 {
		return "there are no hosts"
	}
	parts := make([]string, 0, len(peers))
	for _, e := range peers {
		parts = append(parts, e.name+": "+strings.Join(e.reasons, ", "))
	}
	return strings.Join(parts, "; ")
}

// badness orders the hosts outside the ranking for victims: nodes leave
// gone hosts first, then draining ones, then overloaded ones (§A.5 "excess
// instances stop on the worst-ranked nodes, overloaded ones first"), then
// the rest.
func badness(e *entry) int {
	switch {
	case e.host == nil || e.host.State == StateDown:
		return 0
	case e.host.Availability == Drain:
		return 1
	case e.host.Overloaded:
		return 2
	}
	return 3
}

// victims picks n of the cluster's nodes to remove: first those on hosts
// outside the ranking (badness order, then the policy's order reversed),
// then from the ranked hosts the one with the most nodes, the worst
// ranked among equals, so removal undoes place. On each host a node that
// is not running leaves before a running one, and the last listed before
// the first.
func victims(ranked, all []*entry, n int) []Victim {
	var out []Victim
	take := func(e *entry, k int, why string) {
		ins := orderedForRemoval(e.own)
		for _, in := range ins[:min(k, len(ins))] {
			out = append(out, Victim{Node: in.Node, Host: e.name, Reason: why})
		}
	}
	var outside []*entry
	for _, e := range all {
		if e.rank == 0 && len(e.own) > 0 {
			outside = append(outside, e)
		}
	}
	slices.SortStableFunc(outside, func(a, b *entry) int {
		return cmp.Or(cmp.Compare(badness(a), badness(b)), cmp.Compare(b.order, a.order))
	})
	for _, e := range outside {
		if len(out) >= n {
			return out
		}
		take(e, n-len(out), "its host is not a candidate: "+strings.Join(e.reasons, "; "))
	}
	h := &slotHeap{less: func(a, b slot) bool {
		if a.count != b.count {
			return a.count > b.count
		}
		return a.e.rank > b.e.rank
	}}
	for _, e := range ranked {
		if len(e.own) > 0 {
			h.s = append(h.s, slot{e: e, count: len(e.own)})
		}
	}
	heap.Init(h)
	next := map[*entry]int{} // how many have left each host
	for len(out) < n && h.Len() > 0 {
		s := heap.Pop(h).(slot)
		ins := orderedForRemoval(s.e.own)
		i := next[s.e]
		out = append(out, Victim{Node: ins[i].Node, Host: s.e.name, Reason: fmt.Sprintf("rank %d with %d of the cluster's nodes", s.e.rank, s.count)})
		next[s.e] = i + 1
		if s.count--; s.count > 0 {
			heap.Push(h, s)
		}
	}
	return out
}

func orderedForRemoval(own []Instance) []Instance {
	ins := slices.Clone(own)
	slices.Reverse(ins)
	slices.SortStableFunc(ins, func(a, b Instance) int {
		return cmp.Compare(boolInt(cmp.Or(a.State, InstanceRunning) == InstanceRunning), boolInt(cmp.Or(b.State, InstanceRunning) == InstanceRunning))
	})
	return ins
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// global is SwarmKit's global orchestrator over one reconcile (§B.4): an
// active, up host that passes the constraints and hard affinities runs
// exactly one node; a host that is down, draining, removed or failing them
// has its nodes shut down, not replaced; a paused or overloaded host gets
// nothing new and a failed node there is shut down, not restarted; a host
// in maintenance or frozen is left as it is (no automatic orchestration,
// §A.9–A.10).
func global(peers, strays []*entry) *Global {
	g := &Global{Create: []string{}, Shutdown: []Victim{}}
	shut := func(e *entry, ins Instance, why string) {
		g.Shutdown = append(g.Shutdown, Victim{Node: ins.Node, Host: e.name, Reason: why})
	}
	for _, e := range append(slices.Clone(peers), strays...) {
		h := e.host
		switch {
		case e.stray || h == nil || h.State == StateDown || h.Availability == Drain || e.flags.c || e.flags.a:
			for _, in := range e.own {
				shut(e, in, "its host is not eligible: "+strings.Join(e.reasons, "; "))
			}
		case h.State == StateMaintenance || h.Frozen:
			// kept as they are
		case h.Availability == Pause || h.Overloaded:
			for _, in := range e.own {
				if st := cmp.Or(in.State, InstanceRunning); st == InstanceFailed || st == InstanceStopped {
					shut(e, in, "it is "+st+" on a host that takes no new nodes ("+strings.Join(e.reasons, "; ")+"): shut down, not restarted")
				}
			}
		default:
			kept := false
			for _, in := range e.own {
				st := cmp.Or(in.State, InstanceRunning)
				switch {
				case st != InstanceRunning && st != InstanceStarting:
					shut(e, in, "it is "+st+"; a new node replaces it")
				case kept:
					shut(e, in, "the host already runs one of the cluster's nodes")
				default:
					kept = true
				}
			}
			if !kept {
				g.Create = append(g.Create, e.name)
			}
		}
	}
	return g
}
