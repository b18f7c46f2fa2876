package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
)

// scrape reads the agent's /metrics (a dev agent trusts loopback).
func (a *agentProc) scrape() string {
	a.t.Helper()
	resp, err := http.Get(a.addr + "/metrics")
	if err != nil {
		a.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		a.t.Fatalf("GET /metrics: %d %s", resp.StatusCode, b)
	}
	return string(b)
}

// metric is the value of the series of name whose labels include all of
// labels (written name="value"), or -1 when there is none.
func metric(body, name string, labels ...string) float64 {
	for _, line := range strings.Split(body, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		lbls, value := "", rest
		if strings.HasPrefix(rest, "{") {
			end := strings.LastIndex(rest, "}")
			lbls, value = rest[1:end], rest[end+1:]
		}
		all := true
		for _, l := range labels {
			all = all && strings.Contains(","+lbls+",", ","+l+",")
		}
		if all {
			v, _ := strconv.ParseFloat(strings.TrimSpace(value), 64)
			return v
		}
	}
	return -1
}

// TestObserveMetrics scrapes a real agent: creating a cluster moves the
// action counters and histograms, the node gauges, the plugin call
// latencies, the store latencies and the request counter of its route;
// a killed plugin counts a restart.
func TestObserveMetrics(t *testing.T) {
	a := startAgent(t, t.TempDir())
	before := a.scrape()
	for _, name := range []string{"grove_action_queue_depth", "grove_health_rounds_total", "go_goroutines", "process_resident_memory_bytes"} {
		if metric(before, name) < 0 {
			t.Errorf("a fresh agent's metrics have no %s", name)
		}
	}
	if v := metric(before, "grove_actions_total", `action="CLUSTER_CREATE"`); v >= 0 {
		t.Errorf("a fresh agent counts %v cluster creations", v)
	}
	noopProfile(a, "noop", 0)
	a.waitAction(a.createCluster("web", "noop", 2, nil))
	m := a.scrape()
	for _, c := range []struct {
		name   string
		labels []string
		want   float64 // -1: any value above 0
	}{
		{"grove_actions_total", []string{`action="CLUSTER_CREATE"`, `status="SUCCEEDED"`}, 1},
		{"grove_actions_total", []string{`action="NODE_CREATE"`, `status="SUCCEEDED"`}, 2},
		{"grove_action_duration_seconds_count", []string{`action="CLUSTER_CREATE"`, `status="SUCCEEDED"`}, 1},
		{"grove_nodes", []string{`project="default"`, `cluster="web"`, `status="ACTIVE"`}, 2},
		{"grove_api_requests_total", []string{`route="POST /v1/clusters"`, `code="202"`}, 1},
		{"grove_api_requests_total", []string{`route="POST /v1/profiles"`, `code="201"`}, 1},
		{"grove_plugin_call_duration_seconds_count", []string{`plugin="builtin"`, `code="OK"`}, -1},
		{"grove_store_call_duration_seconds_count", []string{`method="ClaimActions"`}, -1},
		{"grove_store_call_duration_seconds_count", []string{`method="InTx"`}, -1},
		{"grove_health_rounds_total", nil, -1},
	} {
		got := metric(m, c.name, c.labels...)
		if (c.want < 0 && got <= 0) || (c.want >= 0 && got != c.want) {
			t.Errorf("%s{%s} = %v, want %v (-1: above 0)", c.name, strings.Join(c.labels, ","), got, c.want)
		}
	}
	if regexp.MustCompile(`route="[^"]*/v1/clusters/[0-9a-f]{8}-`).MatchString(m) {
		t.Error("a route label holds a raw path with an id; routes must be the patterns")
	}

	var plugins struct {
		Plugins []api.PluginStatus `json:"plugins"`
	}
	a.mustDo(http.MethodGet, "/v1/plugins", nil, &plugins)
	if len(plugins.Plugins) != 1 || plugins.Plugins[0].PID == 0 {
		t.Fatalf("plugins: %+v", plugins.Plugins)
	}
	if err := syscall.Kill(plugins.Plugins[0].PID, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "grove_plugin_restarts_total to count the restart", func() (bool, string) {
		v := metric(a.scrape(), "grove_plugin_restarts_total", `plugin="builtin"`)
		return v == 1, strconv.FormatFloat(v, 'g', -1, 64)
	})
}

// TestObserveFollowAndMonitor follows a real agent's events with the CLI
// (grove event list -follow) and the API client (filtered), and its log
// lines with grove monitor, while a cluster is created; the streams outlive
// the agent's read timeout, and the CLI ends cleanly on Ctrl-C.
func TestObserveFollowAndMonitor(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	// A read timeout shorter than the test: a stream must not be cut by it.
	if err := os.WriteFile(cfg, []byte("api {\n  read_timeout = \"1s\"\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, dir, "-config", cfg, "-log-json")
	noopProfile(a, "noop", 0)

	follow := startCLI(t, a, "event", "list", "-follow", "-json", "-limit", "0")
	monitor := startCLI(t, a, "monitor", "-json", "-log-level", "debug")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	filtered := make(chan api.Event, 100)
	go func() {
		_ = a.client.FollowEvents(ctx, url.Values{"action": {"CLUSTER_CREATE"}}, func(e api.Event) error {
			filtered <- e
			return nil
		})
	}()
	// The CLI's follow, the client's, and the monitor's log and event streams.
	eventually(t, 20*time.Second, "the four streams to be open", func() (bool, string) {
		v := metric(a.scrape(), "grove_api_streams_open")
		return v == 4, strconv.FormatFloat(v, 'g', -1, 64)
	})
	// Outlive the read timeout (1s): a stream it cut would miss what follows.
	time.Sleep(1500 * time.Millisecond)
	create := a.createCluster("web", "noop", 2, nil)
	a.waitAction(create)
	cl := a.cluster("web")

	eventually(t, 20*time.Second, "the CLI to print the cluster creation's end", func() (bool, string) {
		for _, line := range follow.lines() {
			var e api.Event
			if json.Unmarshal([]byte(line), &e) == nil && e.Action == "CLUSTER_CREATE" && e.Status == "end" && e.OID == cl.ID {
				return true, ""
			}
		}
		return false, tail(follow.text(), 5)
	})
	var nodeEnds int
	for _, line := range follow.lines() {
		var e api.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Errorf("grove event list -follow -json printed a line that is not an event: %q", line)
		}
		if e.Action == "NODE_CREATE" && e.Status == "end" {
			nodeEnds++
		}
	}
	if nodeEnds != 2 {
		t.Errorf("the CLI printed %d NODE_CREATE ends, want 2:\n%s", nodeEnds, follow.text())
	}
	seen := map[string]bool{}
	for len(seen) < 2 {
		select {
		case e := <-filtered:
			if e.Action != "CLUSTER_CREATE" {
				t.Errorf("the stream filtered on action=CLUSTER_CREATE sent %s %s", e.Action, e.Status)
			}
			seen[e.Status] = true
		case <-time.After(20 * time.Second):
			t.Fatalf("the filtered stream sent %v of the cluster creation's start and end", seen)
		}
	}
	eventually(t, 20*time.Second, "the monitor to show the action's end with its ids, and its end event", func() (bool, string) {
		var logged, event bool
		for _, line := range monitor.lines() {
			var l map[string]any
			if json.Unmarshal([]byte(line), &l) != nil {
				return false, "a line that is not JSON: " + line
			}
			logged = logged || (l["@message"] == "action finished" && l["action_id"] == create && l["cluster_id"] == cl.ID)
			event = event || (l["action"] == "CLUSTER_CREATE" && l["status"] == "end" && l["oid"] == cl.ID)
		}
		return logged && event, tail(monitor.text(), 5)
	})
	for _, p := range []*cliProc{follow, monitor} {
		if err := p.interrupt(); err != nil {
			t.Errorf("grove %s after Ctrl-C: %v; want exit 0\n%s", p.name, err, p.stderr.String())
		}
	}
	first, _, _ := strings.Cut(a.logText(), "\n")
	if !json.Valid([]byte(first)) {
		t.Errorf("with -log-json, the agent's first log line is not JSON: %q", first)
	}
}

// TestObserveJSONLogs reads a real agent's log with log_format = "json":
// every line is a JSON object, and every line about the cluster's creation
// carries the action's id and the cluster's id.
func TestObserveJSONLogs(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(cfg, []byte("log_format = \"json\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, dir, "-config", cfg)
	noopProfile(a, "noop", 0)
	create := a.createCluster("web", "noop", 2, nil)
	a.waitAction(create)
	cl := a.cluster("web")
	var mine []map[string]any
	eventually(t, 20*time.Second, "the action's start and end lines", func() (bool, string) {
		mine = nil
		msgs := map[any]bool{}
		for _, line := range strings.Split(strings.TrimSpace(a.logText()), "\n") {
			var l map[string]any
			if err := json.Unmarshal([]byte(line), &l); err != nil {
				return false, "a line that is not JSON: " + line
			}
			if l["action_id"] == create {
				mine = append(mine, l)
				msgs[l["@message"]] = true
			}
		}
		return msgs["action started"] && msgs["action finished"], tail(a.logText(), 5)
	})
	for _, l := range mine {
		if l["cluster_id"] != cl.ID || l["action"] != "CLUSTER_CREATE" {
			t.Errorf("a line of the action lacks its cluster id %s or kind: %v", cl.ID, l)
		}
	}
}

// cliProc is a grove command running against an agent.
type cliProc struct {
	name   string
	cmd    *exec.Cmd
	out    *syncBuffer
	stderr *syncBuffer
	done   chan error
	exited chan struct{}
}

func startCLI(t *testing.T, a *agentProc, args ...string) *cliProc {
	t.Helper()
	cmd := exec.Command(groveBin, args...)
	cmd.Env = append(os.Environ(), "GROVE_ADDR="+a.addr)
	p := &cliProc{name: strings.Join(args, " "), cmd: cmd, out: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan error, 1), exited: make(chan struct{})}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			_, _ = p.out.Write([]byte(sc.Text() + "\n"))
		}
		err := cmd.Wait()
		close(p.exited)
		p.done <- err
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

func (p *cliProc) text() string { return p.out.String() }

func (p *cliProc) lines() []string {
	s := strings.TrimSpace(p.text())
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

// interrupt sends Ctrl-C and returns how the command exited.
func (p *cliProc) interrupt() error {
	_ = p.cmd.Process.Signal(os.Interrupt)
	select {
	case err := <-p.done:
		return err
	case <-time.After(20 * time.Second):
		_ = p.cmd.Process.Kill()
		return <-p.done
	}
}
