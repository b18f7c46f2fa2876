package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/orchestrator/monitor"
	"github.com/grovehq/grove/core/orchestrator/placement"
)

// placementHelp says what the placement tables show.
const placementHelp = "Each host is shown with its rank among the candidates (- when it is not\n" +
	"ranked), its flags (A a hard affinity violation, C a constraints violation,\n" +
	"F frozen, L the natural placement leader), how many of the cluster's nodes\n" +
	"it runs, and why it is not ranked. The snapshot format is in docs/placement.md."

// runPlacementSimulate runs the placement decision on a snapshot file:
// what the policy would do, without touching a cluster.
func runPlacementSimulate(_ context.Context, env *Env, args []string) error {
	g := newGlobals(env)
	fs := flagSet("placement simulate", g)
	file := fs.String("f", "", "the snapshot of hosts and instances, as JSON (- for stdin)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if *file == "" || len(pos) != 0 {
		return usagef("usage: grove placement simulate -f SNAPSHOT.json")
	}
	name := "stdin"
	if *file != "-" {
		name = *file
	}
	// A snapshot describes a whole fleet, so it gets the larger limit.
	b, err := readInput(env.Stdin, "the snapshot -f", *file, maxLargeInputBytes)
	if err != nil {
		return err
	}
	s, err := placement.Decode(bytes.NewReader(b))
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	d, err := placement.Decide(s)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ms, steps, err := monitor.Simulate(s, d)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	if g.json {
		if ms != nil {
			return printJSON(env.Stdout, map[string]any{"placement": d, "monitor": steps})
		}
		return printJSON(env.Stdout, d)
	}
	printPlacement(env.Stdout, s.Cluster, d)
	if ms != nil {
		printMonitor(env.Stdout, ms.Settings, steps)
	}
	return nil
}

// printMonitor shows the instance monitor's step on every host: the
// seed's "<status> <monitor state> <flags>", then the next state, the
// action and why.
func printMonitor(out io.Writer, s monitor.Settings, steps []monitor.Step) {
	d := s.Defaults()
	fmt.Fprintf(out, "\nMonitor: topology %s, orchestrate %s, ready period %s.\n\n", d.Topology, d.Orchestrate, time.Duration(*d.ReadyPeriod))
	var table bytes.Buffer
	w := tabwriter.NewWriter(&table, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "HOST\tSTATUS\tSTATE\tFLAGS\tNEXT\tACTION\tREASON")
	for _, st := range steps {
		flags := st.Flags
		if flags == "" {
			flags = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", st.Host, cmp.Or(st.Status, "-"), cmp.Or(st.State, "-"), flags, cmp.Or(st.Next, "-"), st.Action, st.Reason)
	}
	w.Flush()
	for line := range strings.Lines(table.String()) {
		fmt.Fprintln(out, strings.TrimRight(line, " \n"))
	}
}

// printPlacement shows a decision: the hosts table, then the leaders and
// what the decision does.
func printPlacement(out io.Writer, cluster string, d placement.Decision) {
	ranked := 0
	for _, r := range d.Hosts {
		if r.Rank > 0 {
			ranked++
		}
	}
	fmt.Fprintf(out, "Cluster %s, placement %q: %d of %d hosts ranked.\n\n", cluster, d.Placement, ranked, len(d.Hosts))
	var table bytes.Buffer
	w := tabwriter.NewWriter(&table, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "RANK\tHOST\tFLAGS\tNODES\tREASON")
	for _, r := range d.Hosts {
		rank, flags := "-", r.Flags
		if r.Rank > 0 {
			rank = fmt.Sprint(r.Rank)
		}
		if flags == "" {
			flags = "-"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%d\t%s\n", rank, r.Host, flags, r.Nodes, r.Reason)
	}
	w.Flush()
	// The last column is often empty: no line ends in tabwriter's padding.
	for line := range strings.Lines(table.String()) {
		fmt.Fprintln(out, strings.TrimRight(line, " \n"))
	}
	fmt.Fprintln(out)
	leader := d.Leader
	if leader == "" {
		leader = "none"
	}
	natural := d.NaturalLeader
	if natural == "" {
		natural = "none"
	}
	fmt.Fprintf(out, "Leader: %s (natural leader: %s)\n", leader, natural)
	if len(d.Place) > 0 {
		fmt.Fprintf(out, "New nodes: %s\n", strings.Join(d.Place, ", "))
	}
	if len(d.Victims) > 0 {
		fmt.Fprintln(out, "Nodes to remove:")
		for _, v := range d.Victims {
			fmt.Fprintf(out, "  %s on %s: %s\n", v.Node, v.Host, v.Reason)
		}
	}
	if g := d.Global; g != nil {
		create := "none"
		if len(g.Create) > 0 {
			create = strings.Join(g.Create, ", ")
		}
		fmt.Fprintf(out, "Global: a new node on %s\n", create)
		for _, v := range g.Shutdown {
			fmt.Fprintf(out, "  shut down %s on %s: %s\n", v.Node, v.Host, v.Reason)
		}
	}
	if d.Note != "" {
		fmt.Fprintf(out, "Note: %s.\n", strings.TrimSuffix(d.Note, "."))
	}
	if d.Refuse != "" {
		fmt.Fprintf(out, "Refused: %s.\n", strings.TrimSuffix(d.Refuse, "."))
	}
}

// clusterPlacement shows where a cluster's next node would go, as its
// bound grove.policy.placement policy ranks the driver's hosts now.
func clusterPlacement(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster placement", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove cluster placement CLUSTER")
	}
	out, err := get(ctx, g.client(), "/v1/clusters/"+url.PathEscape(pos[0])+"/placement", nil)
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, out["placement"])
	}
	var d placement.Decision
	raw, err := json.Marshal(out["placement"])
	if err == nil {
		err = json.Unmarshal(raw, &d)
	}
	if err != nil {
		return fmt.Errorf("the agent's placement answer cannot be read: %w", err)
	}
	name, _ := out["cluster"].(string)
	printPlacement(env.Stdout, name, d)
	return nil
}
