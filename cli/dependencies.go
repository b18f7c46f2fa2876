package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/orchestrator/deps"
)

var milestoneRes = &resource{name: "milestone", plural: "milestones", path: "/v1/milestones", columns: []column{
	{"ID", "id", true}, {"NAME", "name", false}, {"CLUSTERS", "clusters", false}, {"CREATED", "created_at", false}}}

// readJSONFile reads a JSON file ("-" is stdin), given to the flag what,
// into v, refusing unknown fields so that a misspelt key is an error
// rather than ignored.
func readJSONFile(env *Env, what, path string, v any) error {
	b, err := readInput(env.Stdin, what, path, maxInputBytes)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("%s is not a valid file for this command: %w", path, err)
	}
	return nil
}

// clusterDeps is `grove cluster deps`: both sides of a cluster's
// dependencies, after replacing its declarations with -set's.
func clusterDeps(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("cluster deps", g)
	set := fs.String("set", "", "replace what the cluster declares with this JSON file's {\"groups\": [...], \"dependents\": [...]} (\"-\": stdin)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove cluster deps [-set FILE] CLUSTER")
	}
	c := g.client()
	var d *api.ClusterDependencies
	if *set != "" {
		var req api.DependenciesPut
		if err := readJSONFile(env, "-set", *set, &req); err != nil {
			return err
		}
		d, err = c.PutDependencies(ctx, pos[0], req)
	} else {
		d, err = c.GetDependencies(ctx, pos[0])
	}
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, d)
	}
	fmt.Fprintf(env.Stdout, "Cluster %s: %s; dependencies %s", d.ClusterName, d.State, d.Result)
	if d.Reason != "" {
		fmt.Fprintf(env.Stdout, " (%s)", d.Reason)
	}
	fmt.Fprintln(env.Stdout)
	if len(d.Groups) > 0 {
		fmt.Fprintln(env.Stdout, "\nDepends on:")
		w := tabwriter.NewWriter(env.Stdout, 0, 2, 2, ' ', 0)
		fmt.Fprintln(w, "GROUP\tGROUPING\tRESTART_ON\tMEMBERS\tDECLARED BY\tRESULT\tREASON")
		for _, gr := range d.Groups {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", gr.Name, gr.Grouping, gr.RestartOn, strings.Join(gr.Members, ","), gr.DeclaredBy, gr.Result, gr.Reason)
		}
		w.Flush()
	}
	if len(d.Dependents) > 0 {
		fmt.Fprintf(env.Stdout, "\nDependents %s declared (held by the clusters named):\n", d.ClusterName)
		w := tabwriter.NewWriter(env.Stdout, 0, 2, 2, ' ', 0)
		fmt.Fprintln(w, "GROUP\tGROUPING\tRESTART_ON\tCLUSTERS")
		for _, gr := range d.Dependents {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", gr.Name, gr.Grouping, gr.RestartOn, strings.Join(gr.Members, ","))
		}
		w.Flush()
	}
	if len(d.RequiredBy) > 0 {
		fmt.Fprintln(env.Stdout, "\nRequired by:")
		w := tabwriter.NewWriter(env.Stdout, 0, 2, 2, ' ', 0)
		fmt.Fprintln(w, "CLUSTER\tGROUP\tGROUPING\tRESTART_ON")
		for _, r := range d.RequiredBy {
			fmt.Fprintf(w, "%s\t%s\t%s\t%s\n", r.Cluster, r.Group, r.Grouping, r.RestartOn)
		}
		w.Flush()
	}
	return nil
}

// milestoneCreate is `grove milestone create`.
func milestoneCreate(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("milestone create", g)
	var clusters multiFlag
	fs.Var(&clusters, "cluster", "a cluster of the milestone: its name, id or short id (repeatable)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove milestone create [-cluster CLUSTER]... NAME")
	}
	m, err := g.client().CreateMilestone(ctx, api.MilestoneCreate{Name: pos[0], Clusters: clusters})
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, m)
	}
	fmt.Fprintf(env.Stdout, "Milestone %s created with %d clusters: %s.\n", m.Name, len(m.Clusters), strings.Join(m.Clusters, ", "))
	return nil
}

// Simulation is the file `grove deps simulate -f` reads: a graph snapshot
// and one event (docs/dependencies.md).
type Simulation struct {
	deps.Snapshot
	Event deps.Event `json:"event"`
}

// depsSimulate is `grove deps simulate`: the decisions of
// core/orchestrator/deps on a graph snapshot and an event, without an
// agent.
func depsSimulate(_ context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("deps simulate", g)
	file := fs.String("f", "", "the graph and event as JSON (\"-\": stdin; required)")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 || *file == "" {
		return usagef("usage: grove deps simulate -f FILE")
	}
	var sim Simulation
	if err := readJSONFile(env, "-f", *file, &sim); err != nil {
		return err
	}
	names := map[string]bool{}
	for i, c := range sim.Clusters {
		if c.Name == "" {
			return fmt.Errorf("clusters[%d].name must not be empty.", i)
		}
		if names[c.Name] {
			return fmt.Errorf("clusters[%d].name %q is given twice; names must be unique.", i, c.Name)
		}
		names[c.Name] = true
		switch c.State {
		case deps.Running, deps.Offline, deps.Uninitialized, deps.Stopped, deps.Maintenance:
		default:
			return fmt.Errorf("clusters[%d].state must be running, offline, uninitialized, stopped or maintenance, not %q.", i, c.State)
		}
		for j, gr := range c.Groups {
			if err := deps.ValidateGroup(gr); err != nil {
				if ge, ok := errors.AsType[*deps.GroupError](err); ok {
					return fmt.Errorf("clusters[%d].groups[%d].%s: %w", i, j, ge.Field, err)
				}
				return fmt.Errorf("clusters[%d].groups[%d]: %w", i, j, err)
			}
		}
	}
	verdicts := deps.CheckAll(sim.Snapshot)
	var d deps.Decision
	if sim.Event.Kind != "" {
		if d, err = deps.Propagate(sim.Snapshot, sim.Event); err != nil {
			return err
		}
	}
	if g.json {
		return printJSON(env.Stdout, map[string]any{"clusters": verdicts, "decision": d})
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "CLUSTER\tSTATE\tDEPENDENCIES\tWOULD START\tREASON")
	for i, v := range verdicts {
		state := string(sim.Clusters[i].State)
		if v.Maintenance {
			state = string(deps.Maintenance)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%v\t%s\n", v.Cluster, state, v.Result, v.Start, v.Reason)
	}
	w.Flush()
	if sim.Event.Kind == "" {
		return nil
	}
	what := sim.Event.Cluster
	switch sim.Event.Kind {
	case deps.Milestone:
		what = sim.Event.Milestone
	case deps.ReconcileEvent:
		what = "the graph as it stands"
	}
	fmt.Fprintf(env.Stdout, "\nEvent %s on %s:\n", sim.Event.Kind, what)
	printSteps(env.Stdout, d.Steps)
	if len(d.Recovery) > 0 {
		fmt.Fprintf(env.Stdout, "\nOnce %s runs again:\n", sim.Event.Cluster)
		printSteps(env.Stdout, d.Recovery)
	}
	for _, h := range d.Held {
		fmt.Fprintf(env.Stdout, "  %s stays down: %s\n", h.Cluster, h.Reason)
	}
	return nil
}

func printSteps(w io.Writer, steps []deps.Step) {
	if len(steps) == 0 {
		fmt.Fprintln(w, "  nothing starts or stops")
	}
	for i, s := range steps {
		line := fmt.Sprintf("  %d. %s %s (%s", i+1, s.Op, s.Cluster, s.Cause)
		if s.Because != "" {
			line += ": " + s.Because
		}
		fmt.Fprintln(w, line+")")
	}
}
