package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"syscall"
	"time"

	"github.com/grovehq/grove/api"
)

// How -wait shows an action: on a terminal one status line redrawn in
// place (step, nodes done of total, a rolling update's batch, elapsed);
// elsewhere (a CI log, a pipe) a plain line each time what it says changes
// and every progressEvery while it does not, so a long step still shows
// the wait is alive without flooding the log.

// progressEvery is how often a wait off a terminal repeats an unchanged line.
const progressEvery = 5 * time.Second

// defaultHealthWatch is how long -wait watches new nodes for their first
// health check: the agent's default orchestrator.check_interval, within
// which its health loop checks every node at least once.
const defaultHealthWatch = 5 * time.Second

// signalCause is why Main's context ends when the user sends a signal.
type signalCause struct{ sig os.Signal }

func (s signalCause) Error() string { return "interrupted by " + s.sig.String() }

// interruptCode is the exit code of a command the user interrupted: 128 plus
// the signal's number, as shells report it (130 for Ctrl-C).
func interruptCode(ctx context.Context) int {
	var sc signalCause
	if errors.As(context.Cause(ctx), &sc) {
		if n, ok := sc.sig.(syscall.Signal); ok {
			return 128 + int(n)
		}
	}
	return 128 + int(syscall.SIGINT)
}

// stoppedWaiting is how a wait the user interrupted ends: the agent carries
// on with the action, and the message says how to follow or cancel it.
func stoppedWaiting(ctx context.Context, actionID, what string) error {
	return exitError{code: interruptCode(ctx), note: true, msg: fmt.Sprintf(
		"Stopped waiting; the agent goes on with action %s (%s). Follow it with `grove action wait %s`, or cancel it with `grove action cancel %s`.",
		actionID, strings.TrimSpace(what), actionID, actionID)}
}

// progress draws one wait on w.
type progress struct {
	w        io.Writer
	terminal bool
	width    int  // the terminal's columns, 0 when unknown
	quiet    bool // off a terminal with -json: the JSON answer is all
	drawn    bool // a line is on screen without its newline
	last     string
	lastAt   time.Duration
}

func newProgress(env *Env, quiet bool) *progress {
	return &progress{w: env.Stderr, terminal: env.Terminal, width: env.Width, quiet: quiet && !env.Terminal}
}

// show draws text with the time elapsed.
func (p *progress) show(text string, elapsed time.Duration) {
	if p.quiet {
		return
	}
	line := fmt.Sprintf("%s (%s)", text, formatElapsed(elapsed))
	if p.terminal {
		// A line wider than the terminal wraps, and \r then redraws only
		// its last row: cut it to fit.
		if r := []rune(line); p.width > 1 && len(r) >= p.width {
			line = string(r[:p.width-2]) + "…"
		}
		fmt.Fprintf(p.w, "\r\033[K%s", line)
		p.drawn = true
		return
	}
	if text != p.last || elapsed-p.lastAt >= progressEvery {
		fmt.Fprintln(p.w, line)
		p.last, p.lastAt = text, elapsed
	}
}

// end leaves the line drawn on a terminal in place and moves below it.
func (p *progress) end() {
	if p.drawn {
		fmt.Fprintln(p.w)
		p.drawn = false
	}
}

// formatElapsed rounds to tenths of a second under ten seconds, to seconds
// above.
func formatElapsed(d time.Duration) string {
	if d < 10*time.Second {
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// actionLine says what an action is doing: its step (its status once it
// ended), a rolling update's batch, and its nodes done of total.
func actionLine(what string, a *api.Action) string {
	step := strings.ToLower(a.Status)
	pr := a.Progress
	if pr != nil && pr.Step != "" {
		step = pr.Step
	}
	if a.Terminal() {
		step = a.Status
	}
	parts := []string{step}
	if pr != nil && pr.Batches > 0 {
		parts = append(parts, fmt.Sprintf("batch %d of %d", pr.Batch, pr.Batches))
	}
	if pr != nil && pr.Nodes > 0 {
		nodes := fmt.Sprintf("%d/%d nodes done", pr.Done, pr.Nodes)
		if pr.Failed > 0 {
			nodes += fmt.Sprintf(", %d failed", pr.Failed)
		}
		parts = append(parts, nodes)
	}
	return what + ": " + strings.Join(parts, ", ")
}

// watchAction follows an action to its end, drawing its progress. A failed
// or cancelled action is returned with an error carrying its reason; an
// interrupted wait is stoppedWaiting.
func watchAction(ctx context.Context, p *progress, c *api.Client, id, what string) (*api.Action, error) {
	start := time.Now()
	delay := 100 * time.Millisecond
	for {
		a, err := c.GetAction(ctx, id)
		if err != nil {
			p.end()
			if ctx.Err() != nil {
				return nil, stoppedWaiting(ctx, id, what)
			}
			return nil, err
		}
		p.show(actionLine(what, a), time.Since(start))
		if a.Terminal() {
			p.end()
			if a.Status != "SUCCEEDED" {
				return a, fmt.Errorf("action %s %s: %s", a.Name, strings.ToLower(a.Status), a.StatusReason)
			}
			return a, nil
		}
		select {
		case <-ctx.Done():
			p.end()
			return a, stoppedWaiting(ctx, id, what)
		case <-time.After(delay):
		}
		// Twice a second keeps the elapsed time and the counts live at a
		// cost the agent does not notice.
		delay = min(delay*2, 500*time.Millisecond)
	}
}

// nodeFailure is a new node that failed its first health check.
type nodeFailure struct {
	name, reason string
}

// unhealthy tells whether a node has failed a health check since it was
// created, and why: the health loop marks a node it finds dead ERROR (a
// node stopped by an operation is WARNING), and the restart supervisor may
// already have restarted it, which its restart count keeps.
func unhealthy(n api.Node) (string, bool) {
	count := 0
	if r, ok := n.Data["restarts"].(map[string]any); ok {
		if c, ok := r["count"].(float64); ok {
			count = int(c)
		}
	}
	switch {
	case n.Status == "ERROR" || n.Status == "WARNING":
		return n.StatusReason, true
	case count > 0:
		return fmt.Sprintf("restarted %s by the restart supervisor (now %s)", plural(count, "time", "times"), n.Status), true
	case n.Status == "RECOVERING" || n.Data["failed_at"] != nil:
		return "found dead; being restarted (" + n.Status + ")", true
	}
	return "", false
}

// watchHealth watches a new cluster's nodes for window once their creation
// succeeded and returns those that failed their first health check. The
// health check is the agent's: its health loop checks every idle cluster's
// nodes each orchestrator.check_interval (5s unless the agent sets it), so
// with the default window the first round after the creation falls within
// it; a driver that streams exits (local.process) has a dead node checked
// at once. What a failed check leaves is read from the nodes (see
// unhealthy), not from a check of the CLI's own, so nothing the CLI does
// changes the cluster. It stops early when every node failed, and when a
// node's failure is the cluster's being stopped on purpose (stoppedCluster):
// its nodes were stopped, and the line shown says why.
func watchHealth(ctx context.Context, p *progress, c *api.Client, clusterID, name, what string, window time.Duration) (int, []nodeFailure, error) {
	if window <= 0 {
		return 0, nil, nil
	}
	start := time.Now()
	failed := map[string]nodeFailure{}
	var order []string
	for {
		nodes, err := c.ListNodes(ctx, url.Values{"cluster_id": {clusterID}, "sort": {"index"}})
		if err != nil && ctx.Err() == nil {
			p.end()
			return 0, nil, err
		}
		for _, n := range nodes {
			if _, seen := failed[n.ID]; seen {
				continue
			}
			if reason, bad := unhealthy(n); bad {
				failed[n.ID] = nodeFailure{name: n.Name, reason: reason}
				order = append(order, n.ID)
			}
		}
		elapsed := time.Since(start)
		if len(failed) > 0 {
			if why, stopped := stoppedCluster(ctx, c, clusterID); stopped {
				p.end()
				p.show(fmt.Sprintf("%s: stopped, so not watched for a health check: %s", what, why), elapsed)
				p.end()
				return len(nodes), nil, nil
			}
		}
		if len(nodes) > 0 {
			p.show(fmt.Sprintf("%s: watching %s for %s for their first health check, %d failed", what,
				plural(len(nodes), "node", "nodes"), formatElapsed(window), len(failed)), min(elapsed, window))
		}
		if elapsed >= window || len(nodes) == 0 || len(failed) == len(nodes) {
			p.end()
			out := make([]nodeFailure, len(order))
			for i, id := range order {
				out[i] = failed[id]
			}
			return len(nodes), out, nil
		}
		select {
		case <-ctx.Done():
			p.end()
			return 0, nil, exitError{code: interruptCode(ctx), note: true, msg: fmt.Sprintf(
				"Stopped watching the new nodes' health; cluster %s was created. `grove cluster status %s` shows its nodes.", name, name)}
		case <-time.After(min(250*time.Millisecond, window-elapsed)):
		}
	}
}

// stoppedCluster tells whether a cluster is stopped on purpose, and why: by
// an operator, a milestone, or its dependencies (a cluster created while
// they are not satisfied has its nodes stopped at once, docs/dependencies.md).
// Its stopped nodes are WARNING then without having failed anything.
func stoppedCluster(ctx context.Context, c *api.Client, clusterID string) (string, bool) {
	cl, err := c.GetCluster(ctx, clusterID)
	if err != nil {
		return "", false
	}
	run, _ := cl.Data["run"].(map[string]any)
	if stopped, _ := run["stopped"].(bool); !stopped {
		return "", false
	}
	if cl.RunReason != "" {
		return cl.RunReason, true
	}
	why, _ := run["reason"].(string)
	return why, true
}

// healthError is how nodes that failed their first health check fail the
// command that created them.
func healthError(cluster string, total int, failed []nodeFailure, window time.Duration) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Cluster %s was created, but %d of %s failed their first health check within %s:\n", cluster, len(failed), plural(total, "node", "nodes"), window)
	for _, f := range failed {
		fmt.Fprintf(&b, "  %s: %s\n", f.name, f.reason)
	}
	fmt.Fprintf(&b, "`grove cluster status %s` shows its nodes; `grove event list -cluster %s` says what happened to them.", cluster, cluster)
	return exitError{code: 1, msg: b.String()}
}

// healthFlag registers -health-watch on a command that creates nodes.
func (g *globals) healthFlag(fs *flag.FlagSet) {
	fs.DurationVar(&g.healthWatch, "health-watch", defaultHealthWatch,
		"once a cluster is created, how long to watch its new nodes for their first health check (0s skips it)")
}
