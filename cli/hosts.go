package cli

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/grovehq/grove/api"
)

// availabilities are what an operator may set on a host.
var availabilities = []string{"active", "pause", "drain"}

func hostList(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("host list", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 0 {
		return usagef("usage: grove host list")
	}
	hosts, err := g.client().ListHosts(ctx)
	if err != nil {
		return err
	}
	if g.json {
		if hosts == nil {
			hosts = []api.HostRecord{}
		}
		return printJSON(env.Stdout, hosts)
	}
	w := tabwriter.NewWriter(env.Stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(w, "NAME\tKIND\tSTATE\tAVAILABILITY\tNODES\tLOAD\tLABELS\tHEARTBEAT")
	for _, h := range hosts {
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\t%s\t%s\n", h.Name, h.Kind, h.State, h.Availability, h.Nodes, loadCell(h.Load), labelsCell(h.Labels), h.Heartbeat)
	}
	return w.Flush()
}

// loadCell shows an agent's load averages, or a driver's figures.
func loadCell(load map[string]float64) string {
	if len(load) == 0 {
		return "-"
	}
	if _, ok := load["load1"]; ok {
		return fmt.Sprintf("%.2f %.2f %.2f", load["load1"], load["load5"], load["load15"])
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(load)) {
		parts = append(parts, fmt.Sprintf("%s=%g", k, load[k]))
	}
	return strings.Join(parts, ",")
}

func labelsCell(labels map[string]string) string {
	if len(labels) == 0 {
		return "-"
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(labels)) {
		parts = append(parts, k+"="+labels[k])
	}
	return strings.Join(parts, ",")
}

func hostShow(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("host show", g)
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove host show HOST")
	}
	h, err := g.client().GetHost(ctx, pos[0])
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, h)
	}
	return details(env, h)
}

func hostUpdate(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("host update", g)
	avail := fs.String("availability", "", "active (takes new nodes), pause (takes none, keeps its nodes) or drain (its local.process nodes move away)")
	var labels multiFlag
	fs.Var(&labels, "label", "an operator label KEY=VALUE (repeatable); the labels given replace the operator's labels")
	clear := fs.Bool("clear-labels", false, "remove every operator label")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 || (*avail == "" && len(labels) == 0 && !*clear) {
		return usagef("usage: grove host update [-availability active|pause|drain] [-label KEY=VALUE]... [-clear-labels] HOST")
	}
	var in api.HostUpdate
	if *avail != "" {
		if !slices.Contains(availabilities, *avail) {
			return usagef("-availability must be one of %s, got %q", strings.Join(availabilities, ", "), *avail)
		}
		in.Availability = avail
	}
	if len(labels) > 0 && *clear {
		return usagef("-label and -clear-labels cannot be used together")
	}
	if len(labels) > 0 || *clear {
		m := map[string]string{}
		for _, p := range labels {
			k, v, ok := strings.Cut(p, "=")
			if !ok || k == "" {
				return usagef("-label %q is not KEY=VALUE", p)
			}
			m[k] = v
		}
		in.Labels = &m
	}
	h, err := g.client().UpdateHost(ctx, pos[0], in)
	if err != nil {
		return err
	}
	if g.json {
		return printJSON(env.Stdout, h)
	}
	fmt.Fprintf(env.Stdout, "Host %s is %s and %s; operator labels: %s.\n", h.Name, h.State, h.Availability, labelsCell(h.OperatorLabels))
	return nil
}
