package cli

import (
	"context"
	"fmt"
	"time"

	"github.com/grovehq/grove/api"
)

// milestoneEnter is `grove milestone enter`: it prints what entering the
// milestone stops and starts and, with -wait, waits until each cluster is
// where its step leaves it.
func milestoneEnter(ctx context.Context, env *Env, _ *api.Client, g *globals, args []string) error {
	fs := flagSet("milestone enter", g)
	fs.BoolVar(&g.wait, "wait", false, "wait until every cluster it stops is offline and every one it starts runs")
	wait := fs.Duration("wait-timeout", 5*time.Minute, "with -wait: how long to wait")
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("usage: grove milestone enter [-wait] <milestone|all|none>")
	}
	c := g.client()
	out, err := c.EnterMilestone(ctx, pos[0])
	if err != nil {
		return err
	}
	if g.json && !g.wait {
		return printJSON(env.Stdout, out)
	}
	if !g.json {
		fmt.Fprintf(env.Stdout, "Entering milestone %s: %d steps.\n", out.Milestone, len(out.Steps))
		for _, st := range out.Steps {
			fmt.Fprintf(env.Stdout, "  %s %s", st.Op, st.Cluster)
			if st.Because != "" {
				fmt.Fprintf(env.Stdout, " (%s)", st.Because)
			}
			fmt.Fprintln(env.Stdout)
		}
		for _, h := range out.Held {
			fmt.Fprintf(env.Stdout, "  held %s: %s\n", h.Cluster, h.Reason)
		}
	}
	if !g.wait {
		return nil
	}
	deadline := time.Now().Add(*wait)
	for _, st := range out.Steps {
		want := "running"
		if st.Op == "stop" {
			want = "offline"
		}
		for {
			cl, err := c.GetCluster(ctx, st.Cluster)
			if err != nil {
				return err
			}
			if cl.RunState == want || (want == "offline" && cl.RunState == "maintenance") {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("Cluster %s is %s after %s, not %s.", st.Cluster, cl.RunState, *wait, want)
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
	}
	if g.json {
		return printJSON(env.Stdout, out)
	}
	fmt.Fprintf(env.Stdout, "Milestone %s entered.\n", out.Milestone)
	return nil
}
