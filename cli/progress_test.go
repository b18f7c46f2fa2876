package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

func TestActionLine(t *testing.T) {
	cases := []struct {
		name string
		a    api.Action
		want string
	}{
		{"no progress: the status", api.Action{Status: "READY"}, "Creating cluster web: ready"},
		{"the step and the nodes done of total",
			api.Action{Status: "RUNNING", Progress: &api.ActionProgress{Step: "creating nodes", Nodes: 3, Done: 1}},
			"Creating cluster web: creating nodes, 1/3 nodes done"},
		{"failed nodes are counted",
			api.Action{Status: "RUNNING", Progress: &api.ActionProgress{Step: "creating nodes", Nodes: 3, Done: 1, Failed: 2}},
			"Creating cluster web: creating nodes, 1/3 nodes done, 2 failed"},
		{"a rolling update's batch",
			api.Action{Status: "RUNNING", Progress: &api.ActionProgress{Step: "updating nodes", Nodes: 8, Done: 2, Batch: 2, Batches: 4}},
			"Creating cluster web: updating nodes, batch 2 of 4, 2/8 nodes done"},
		{"an ended action shows its status as the API spells it",
			api.Action{Status: "SUCCEEDED", Progress: &api.ActionProgress{Step: "succeeded", Nodes: 3, Done: 3}},
			"Creating cluster web: SUCCEEDED, 3/3 nodes done"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := actionLine("Creating cluster web", &tc.a); got != tc.want {
				t.Errorf("actionLine = %q, want %q", got, tc.want)
			}
		})
	}
}

// Off a terminal a wait prints a line when what it says changes, and
// repeats an unchanged one every progressEvery, never in between.
func TestProgressOffTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&Env{Stderr: &b}, false)
	steps := []struct {
		text    string
		elapsed time.Duration
	}{
		{"web: creating nodes, 0/3 nodes done", 0},
		{"web: creating nodes, 0/3 nodes done", time.Second},
		{"web: creating nodes, 0/3 nodes done", 4 * time.Second},
		{"web: creating nodes, 0/3 nodes done", 5 * time.Second},
		{"web: creating nodes, 1/3 nodes done", 5500 * time.Millisecond},
		{"web: creating nodes, 1/3 nodes done", 6 * time.Second},
	}
	for _, s := range steps {
		p.show(s.text, s.elapsed)
	}
	p.end()
	want := "web: creating nodes, 0/3 nodes done (0s)\n" +
		"web: creating nodes, 0/3 nodes done (5s)\n" +
		"web: creating nodes, 1/3 nodes done (5.5s)\n"
	if b.String() != want {
		t.Errorf("lines:\n%s\nwant:\n%s", b.String(), want)
	}

	b.Reset()
	q := newProgress(&Env{Stderr: &b}, true)
	q.show("web: creating nodes", 0)
	q.end()
	if b.Len() != 0 {
		t.Errorf("-json off a terminal printed %q; the JSON answer is all", b.String())
	}
}

// On a terminal the line is redrawn in place, cut to the terminal's width,
// and left standing when the wait ends.
func TestProgressOnTerminal(t *testing.T) {
	var b bytes.Buffer
	p := newProgress(&Env{Stderr: &b, Terminal: true, Width: 30}, true)
	p.show("web: creating nodes, 0/3 nodes done", 0)
	p.show("web: creating nodes, 0/3 nodes done", 500*time.Millisecond)
	p.end()
	p.end()
	out := b.String()
	if strings.Count(out, "\r\033[K") != 2 {
		t.Errorf("the line is not redrawn in place twice: %q", out)
	}
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\r\033[K")[1:] {
		if n := len([]rune(line)); n >= 30 {
			t.Errorf("line %q is %d columns on a 30-column terminal", line, n)
		}
	}
	if !strings.HasSuffix(out, "…\n") || strings.Count(out, "\n") != 1 {
		t.Errorf("a cut line ends with … and the wait with one newline: %q", out)
	}
}

func TestNextPage(t *testing.T) {
	g := &globals{stderr: io.Discard}
	fs := flag.NewFlagSet("event list", flag.ContinueOnError)
	g.register(fs)
	fs.Int("limit", defaultPage, "")
	fs.String("marker", "", "")
	fs.String("cluster", "", "")
	g.alias(fs, "cluster_id", "cluster")
	fs.String("object-name", "", "")
	args := []string{"-cluster_id", "web", "-limit", "5", "-object-name", "it's mine", "-json", "-token", "s3cret", "-marker", "old"}
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	got := nextPage("event", fs, "4c1f-id")
	want := `grove event list -cluster web -json -limit 5 -object-name 'it'\''s mine' -marker 4c1f-id`
	if got != want {
		t.Errorf("nextPage = %s\nwant        %s", got, want)
	}
}

func TestUnhealthy(t *testing.T) {
	cases := []struct {
		name string
		n    api.Node
		bad  bool
		want string
	}{
		{"active and never restarted", api.Node{Status: "ACTIVE", Data: map[string]any{}}, false, ""},
		{"found dead by a check", api.Node{Status: "ERROR", StatusReason: "Check: Node is not ACTIVE: process exited: status 1"}, true,
			"Check: Node is not ACTIVE: process exited: status 1"},
		{"stopped", api.Node{Status: "WARNING", StatusReason: "stopped"}, true, "stopped"},
		{"restarted already", api.Node{Status: "ACTIVE", Data: map[string]any{"restarts": map[string]any{"count": float64(1)}}}, true,
			"restarted 1 time by the restart supervisor (now ACTIVE)"},
		{"being restarted", api.Node{Status: "RECOVERING", Data: map[string]any{}}, true, "found dead; being restarted (RECOVERING)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			why, bad := unhealthy(tc.n)
			if bad != tc.bad || why != tc.want {
				t.Errorf("unhealthy = %q, %v; want %q, %v", why, bad, tc.want, tc.bad)
			}
		})
	}
}

// An interrupted wait is news, not an error: it says the action goes on
// and how to follow it, and exits 128 plus the signal's number.
func TestInterruptedWait(t *testing.T) {
	for _, tc := range []struct {
		sig  syscall.Signal
		code int
	}{{syscall.SIGINT, 130}, {syscall.SIGTERM, 143}} {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(signalCause{tc.sig})
		var stderr, stdout bytes.Buffer
		env := &Env{Stdout: &stdout, Stderr: &stderr}
		code := report(env, stoppedWaiting(ctx, "a1b2", "Creating cluster web"), false)
		if code != tc.code {
			t.Errorf("%v: exit %d, want %d", tc.sig, code, tc.code)
		}
		msg := stderr.String()
		if strings.HasPrefix(msg, "Error:") || !strings.Contains(msg, "the agent goes on with action a1b2 (Creating cluster web)") ||
			!strings.Contains(msg, "`grove action wait a1b2`") || strings.Contains(msg, "context canceled") {
			t.Errorf("%v: stderr %q", tc.sig, msg)
		}
		stdout.Reset()
		report(env, stoppedWaiting(ctx, "a1b2", "Creating cluster web"), true)
		var body struct {
			Error struct {
				Type     string `json:"type"`
				ExitCode int    `json:"exit_code"`
			} `json:"error"`
		}
		if err := json.Unmarshal(stdout.Bytes(), &body); err != nil || body.Error.Type != "Interrupted" || body.Error.ExitCode != tc.code {
			t.Errorf("%v: -json error %s (%v)", tc.sig, stdout.String(), err)
		}
	}
}

// A request cut short by Ctrl-C says it was interrupted, not "context
// canceled", and exits 130.
func TestInterruptedRequest(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(signalCause{syscall.SIGINT})
	var stdout, stderr bytes.Buffer
	code := Run(ctx, &Env{Stdin: strings.NewReader(""), Stdout: &stdout, Stderr: &stderr}, []string{"cluster", "list", "-address", "127.0.0.1:1"})
	if code != 130 || stderr.String() != "Interrupted.\n" {
		t.Errorf("exit %d, stderr %q; want 130 and Interrupted.", code, stderr.String())
	}
}

// TestWatchHealthOfAStoppedCluster: a cluster created while its
// dependencies are not satisfied has its nodes stopped at once (WARNING,
// "stopped by operation stop"); that is no failed health check, so the
// watch says why the cluster waits instead of failing the command.
func TestWatchHealthOfAStoppedCluster(t *testing.T) {
	run := map[string]any{"cause": "dependency", "reason": "Waiting on excluded maintenance_page running", "stopped": true}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/clusters/c1":
			_ = json.NewEncoder(w).Encode(map[string]any{"cluster": map[string]any{"id": "c1", "name": "web", "status": "WARNING",
				"run_state": "offline", "run_reason": run["reason"], "data": map[string]any{"run": run}}})
		case "/v1/nodes":
			_ = json.NewEncoder(w).Encode(map[string]any{"nodes": []any{
				map[string]any{"id": "n1", "name": "node-1", "status": "WARNING", "status_reason": "Operation 'stop' succeeded: stopped by operation stop", "data": map[string]any{}},
			}})
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	var stderr bytes.Buffer
	p := newProgress(&Env{Stderr: &stderr}, false)
	total, failed, err := watchHealth(context.Background(), p, api.NewClient(srv.URL), "c1", "web", "  cluster.web", time.Second)
	if err != nil || len(failed) != 0 {
		t.Fatalf("watchHealth = %d, %v, %v; want no failure", total, failed, err)
	}
	if want := "cluster.web: stopped, so not watched for a health check: Waiting on excluded maintenance_page running"; !strings.Contains(stderr.String(), want) {
		t.Errorf("the watch does not say why the cluster is stopped; got %q, want %q", stderr.String(), want)
	}
}
