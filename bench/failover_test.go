package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/store/postgres/pgtest"
	"github.com/grovehq/grove/internal/proctest"
	"github.com/grovehq/grove/plugins/builtin/process"
)

// The failover agents' timings, as e2e/failover_test.go runs them: a
// heartbeat every 300 ms, a host down once its last heartbeat is 2 s old.
// The health round, which runs the instance monitors, keeps its default
// interval (5 s) unless GROVE_BENCH_FAILOVER_CHECK sets one (the e2e test
// sets 300ms).
const (
	foHeartbeat   = 300 * time.Millisecond
	foDownTimeout = 2 * time.Second
)

// BenchmarkFailover measures a failover cluster's takeover: three agents
// as three hosts on one PostgreSQL store, a failover cluster (orchestrate
// ha) of one local.process node of the demo HTTP server; the leader's
// agent and its node are SIGKILLed, as the machine dying would, and the
// time runs to the first HTTP answer of the node another host started.
// The reference is the sum issue 18 sets: the host down timeout, the ready
// period and a node's start time, measured in the same iteration as a
// plain create of a one-node replicated cluster of the same profile
// (request to first HTTP answer). Each iteration runs on its own database
// with fresh agents. Run the two periods with their own -benchtime, as
// make bench does: -bench 'Failover/ready=1s' -benchtime 2x and
// -bench 'Failover/ready=16s' -benchtime 1x.
func BenchmarkFailover(b *testing.B) {
	for _, ready := range []time.Duration{time.Second, 16 * time.Second} {
		b.Run("ready="+ready.String(), func(b *testing.B) { benchFailover(b, ready) })
	}
}

// foTimes is one takeover's timeline, each mark since the SIGKILL.
type foTimes struct {
	start    time.Duration // the plain create's start time, measured before
	beat     time.Duration // the dead host's last heartbeat (negative)
	down     time.Duration // a survivor marked the dead host down
	ready    time.Duration // the new host's instance went ready
	starting time.Duration // and starting: the ready period ran out
	answer   time.Duration // the new node's first HTTP answer
}

func benchFailover(b *testing.B, ready time.Duration) {
	srv := pgtest.Start(b, 55491)
	// Node processes outlive their agents; the supervisors of this
	// benchmark's nodes are found by their directories, which lie under
	// this benchmark's own temporary root.
	root := filepath.Dir(b.TempDir())
	b.Cleanup(func() { killNodesUnder(root) })
	var all []foTimes
	b.StopTimer()
	for i := range b.N {
		all = append(all, failoverOnce(b, srv, fmt.Sprintf("fo%d", i), ready))
		killNodesUnder(root)
	}
	var sum foTimes
	var worst time.Duration
	for _, t := range all {
		sum.start += t.start
		sum.beat += t.beat
		sum.down += t.down
		sum.ready += t.ready
		sum.starting += t.starting
		sum.answer += t.answer
		worst = max(worst, t.answer)
	}
	n := float64(len(all))
	s := func(d time.Duration) float64 { return d.Seconds() / n }
	reference := s(foDownTimeout*time.Duration(len(all))+ready*time.Duration(len(all))) + s(sum.start)
	b.ReportMetric(s(sum.answer), "failover-s")
	b.ReportMetric(worst.Seconds(), "failover-worst-s")
	b.ReportMetric(reference, "reference-s")
	b.ReportMetric(s(sum.answer)-reference, "excess-s")
	b.ReportMetric(s(sum.start), "start-s")
	// Where the time went: detection, the monitor's first round after it,
	// the ready period's end to the round that starts, the start itself.
	b.ReportMetric(-s(sum.beat), "last-beat-before-kill-s")
	b.ReportMetric(s(sum.down), "down-at-s")
	b.ReportMetric(s(sum.ready-sum.down), "down-to-ready-s")
	b.ReportMetric(s(sum.starting-sum.ready)-ready.Seconds(), "ready-overrun-s")
	b.ReportMetric(s(sum.answer-sum.starting), "starting-to-answer-s")
}

// failoverOnce runs one takeover on a fresh database db of srv.
func failoverOnce(b *testing.B, srv *pgtest.Server, db string, ready time.Duration) foTimes {
	ctx := context.Background()
	createdb := exec.Command(filepath.Join(pgtest.BinDir, "createdb"), "-h", srv.Dir, "-p", strconv.Itoa(srv.Port), "-U", "postgres", db)
	if out, err := createdb.CombinedOutput(); err != nil {
		b.Fatalf("createdb %s: %v\n%s", db, err, out)
	}
	dsn := strings.Replace(srv.DSN(), "dbname=postgres", "dbname="+db, 1)
	hosts := []string{db + "-a", db + "-b", db + "-c"}
	agents := map[string]*hostAgent{}
	defer func() {
		for _, a := range agents {
			a.stop()
		}
	}()
	agents[hosts[0]] = startHostAgent(b, dsn, hosts[0])
	c := agents[hosts[0]].client
	hostsUp := func(want int) {
		waitFor(b, 30*time.Second, fmt.Sprintf("%d hosts up", want), func() (bool, string) {
			hs, err := c.ListHosts(ctx)
			if err != nil {
				return false, err.Error()
			}
			up := 0
			for _, h := range hs {
				if h.State == "up" {
					up++
				}
			}
			return up == want, fmt.Sprint(hs)
		})
	}
	hostsUp(1)
	post(b, c, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "web",
		"spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{groveBin, "demo-http"}, "stop_timeout": 1}}}})

	// A node's start time: a plain create of a one-node cluster on the
	// first host alone, from the request to the first HTTP answer, as a
	// monitor's start runs on its own host (its agent claims both the
	// cluster's and the node's action at once; another agent would find
	// them only on its next poll). Twice, the mean.
	var t foTimes
	for j := range 2 {
		name := fmt.Sprintf("probe%d", j)
		begin := time.Now()
		r, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{"name": name, "profile_id": "web", "desired_capacity": 1}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		answered(b, c, name, "", begin.Add(30*time.Second))
		t.start += time.Since(begin) / 2
		if _, err := c.WaitAction(ctx, r.ActionID(), nil); err != nil {
			b.Fatal(err)
		}
		post(b, c, "/v1/clusters/"+name, nil)
	}
	for _, h := range hosts[1:] {
		agents[h] = startHostAgent(b, dsn, h)
	}
	hostsUp(3)

	// The failover cluster starts on the placement leader after the ready
	// period.
	period := ready.String()
	post(b, c, "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "fo", "profile_id": "web", "desired_capacity": 0,
		"config": map[string]any{"grove.failover": map[string]any{"topology": "failover", "orchestrate": "ha", "ready_period": period, "rejoin_grace_period": "2s"}}}})
	first := answered(b, c, "fo", "", time.Now().Add(ready+60*time.Second))
	// Until its instance is idle again (started, then idle once up), the
	// monitor is still busy with the first start.
	waitFor(b, 30*time.Second, "the leader's instance idle", func() (bool, string) {
		cl, err := c.GetCluster(ctx, "fo")
		if err != nil {
			return false, err.Error()
		}
		for _, x := range cl.Instances {
			if x.Host == first.Host {
				return x.Status == "up" && x.State == "idle", x.Status + " " + x.State
			}
		}
		return false, "no instance on " + first.Host
	})
	leader := first.Host
	// The benchmark polls the survivor last in the placement's order, not
	// the next leader, so its polling does not load the agent it times.
	var obs *hostAgent
	for _, h := range hosts {
		if h != leader {
			obs = agents[h]
		}
	}

	b.StartTimer()
	killed := time.Now()
	agents[leader].kill()
	if pid, ok := first.Data["pid"].(float64); ok {
		_ = syscall.Kill(-int(pid), syscall.SIGKILL)
	}
	// Poll often: the answer's mark is only as fine as the poll.
	var second api.Node
	deadline := killed.Add(ready + 60*time.Second)
	for second.ID == "" {
		if time.Now().After(deadline) {
			b.Fatalf("no node answered on another host than %s within %s of the kill\nobserver's log tail:\n%s", leader, deadline.Sub(killed), obs.logTail())
		}
		time.Sleep(10 * time.Millisecond)
		ns, err := obs.client.ListNodes(ctx, url.Values{"cluster_id": {"fo"}})
		if err != nil {
			continue
		}
		for _, n := range ns {
			if addr, _ := n.Data["address"].(string); n.Host != leader && addr != "" && answers(addr, n.Name) {
				second = n
			}
		}
	}
	t.answer = time.Since(killed)
	b.StopTimer()
	// The other marks come from the agents' own logs (millisecond times;
	// the API shows an instance's since to the second) and the dead host's
	// record.
	if h, err := obs.client.GetHost(ctx, leader); err == nil {
		t.beat = since(killed, h.Heartbeat)
	}
	for _, h := range hosts {
		if h == leader {
			continue
		}
		log := agents[h].logLines(killed)
		if at, ok := log.first("host is down: no heartbeat within the timeout: host=" + leader + " "); ok && (t.down == 0 || at < t.down) {
			t.down = at
		}
		if h == second.Host {
			step := "instance monitor step: cluster=fo host=" + h + " state="
			t.ready, _ = log.first(step + "ready ")
			t.starting, _ = log.first(step + "starting ")
		}
	}
	// GROVE_BENCH_FAILOVER_LOGS names a directory to keep the agents' logs in.
	if dir := os.Getenv("GROVE_BENCH_FAILOVER_LOGS"); dir != "" {
		for _, h := range hosts {
			body, _ := os.ReadFile(agents[h].log)
			_ = os.WriteFile(filepath.Join(dir, h+".log"), body, 0o644)
		}
	}
	b.Logf("%s: %s → %s: last beat %.3fs, down %.3fs, ready %.3fs, starting %.3fs, answer %.3fs (start time %.3fs)", db, leader, second.Host,
		t.beat.Seconds(), t.down.Seconds(), t.ready.Seconds(), t.starting.Seconds(), t.answer.Seconds(), t.start.Seconds())
	if t.down == 0 || t.ready == 0 || t.starting == 0 {
		b.Fatalf("the survivors' logs lack a mark: down %s, ready %s, starting %s", t.down, t.ready, t.starting)
	}
	return t
}

// logMarks are an agent's log messages with their times since a moment.
type logMarks []struct {
	at  time.Duration
	msg string
}

// first is the time of the first message that contains s.
func (l logMarks) first(s string) (time.Duration, bool) {
	for _, m := range l {
		if strings.Contains(m.msg+" ", s) {
			return m.at, true
		}
	}
	return 0, false
}

// logLines reads the agent's log messages written after t0 (hclog's
// "TIME [LEVEL]  name: message" lines).
func (a *hostAgent) logLines(t0 time.Time) logMarks {
	body, _ := os.ReadFile(a.log)
	var out logMarks
	for _, line := range strings.Split(string(body), "\n") {
		stamp, msg, ok := strings.Cut(line, " ")
		at, err := time.Parse(time.RFC3339Nano, stamp)
		if !ok || err != nil || at.Before(t0) {
			continue
		}
		out = append(out, struct {
			at  time.Duration
			msg string
		}{at.Sub(t0), msg})
	}
	return out
}

// since is how long after t0 the RFC 3339 time s is.
func since(t0 time.Time, s string) time.Duration {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return 0
	}
	return t.Sub(t0)
}

// answers says whether the demo server at addr answers as node name.
func answers(addr, name string) bool {
	c := http.Client{Timeout: time.Second}
	resp, err := c.Get("http://" + addr + "/")
	if err != nil {
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return bytes.Contains(body, []byte("hello from "+name))
}

// answered waits until a node of the cluster answers HTTP, on a host
// other than skip, and returns it.
func answered(b *testing.B, c *api.Client, cluster, skip string, deadline time.Time) api.Node {
	b.Helper()
	for {
		ns, err := c.ListNodes(context.Background(), url.Values{"cluster_id": {cluster}})
		if err == nil {
			for _, n := range ns {
				if addr, _ := n.Data["address"].(string); n.Host != skip && addr != "" && answers(addr, n.Name) {
					return n
				}
			}
		}
		if time.Now().After(deadline) {
			b.Fatalf("no node of %s answered: %v %v", cluster, ns, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// post sends a request whose action, if any, must succeed; a nil body
// is a DELETE.
func post(b *testing.B, c *api.Client, path string, body any) {
	b.Helper()
	method := http.MethodPost
	if body == nil {
		method = http.MethodDelete
	}
	ctx := context.Background()
	r, err := c.Do(ctx, method, path, nil, body, nil)
	if err != nil {
		b.Fatalf("%s %s: %v", method, path, err)
	}
	if id := r.ActionID(); id != "" {
		wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
		defer cancel()
		if act, err := c.WaitAction(wctx, id, nil); err != nil || act.Status != "SUCCEEDED" {
			b.Fatalf("%s %s: %v %+v", method, path, err, act)
		}
	}
}

// waitFor polls cond until it holds or d passes.
func waitFor(b *testing.B, d time.Duration, what string, cond func() (bool, string)) {
	b.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, info := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("timed out after %s waiting for %s; last seen: %s", d, what, info)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// hostAgent is one `grove agent` process as one host, on a PostgreSQL
// store.
type hostAgent struct {
	cmd    *exec.Cmd
	client *api.Client
	log    string
	done   bool
}

// startHostAgent runs an agent named host on the store dsn, with the
// failover timings above; its log (info level) is kept in its data dir.
func startHostAgent(b *testing.B, dsn, host string) *hostAgent {
	b.Helper()
	dir := b.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	body := fmt.Sprintf(`store {
  driver = "postgres"
  dsn = %q
}
host_name = %q
host_heartbeat_interval = %q
host_down_timeout = %q
workers {
  lease_seconds = 2
}
`, dsn, host, foHeartbeat, foDownTimeout)
	if check := os.Getenv("GROVE_BENCH_FAILOVER_CHECK"); check != "" {
		body += fmt.Sprintf("orchestrator {\n  check_interval = %q\n}\n", check)
	}
	if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
		b.Fatal(err)
	}
	a := &hostAgent{log: filepath.Join(dir, "agent.log")}
	logf, err := os.Create(a.log)
	if err != nil {
		b.Fatal(err)
	}
	defer logf.Close()
	a.cmd = exec.Command(groveBin, "agent", "-dev", "-bind", "127.0.0.1:0", "-data-dir", dir, "-log-level", "info", "-config", cfg)
	out, _ := a.cmd.StdoutPipe()
	a.cmd.Stderr = logf
	if err := a.cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(a.stop)
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case addr := <-found:
		a.client = api.NewClient(addr)
	case <-time.After(60 * time.Second):
		a.kill()
		b.Fatalf("agent %s did not start:\n%s", host, a.logTail())
	}
	return a
}

// kill SIGKILLs the agent, as a crash would.
func (a *hostAgent) kill() {
	if a.done {
		return
	}
	a.done = true
	_ = a.cmd.Process.Kill()
	_ = a.cmd.Wait()
}

// stop interrupts the agent and waits for it, killing it after 20 s.
func (a *hostAgent) stop() {
	if a.done {
		return
	}
	a.done = true
	_ = a.cmd.Process.Signal(os.Interrupt)
	t := time.AfterFunc(20*time.Second, func() { _ = a.cmd.Process.Kill() })
	_ = a.cmd.Wait()
	t.Stop()
}

func (a *hostAgent) logTail() string {
	body, _ := os.ReadFile(a.log)
	lines := strings.Split(string(body), "\n")
	return strings.Join(lines[max(0, len(lines)-40):], "\n")
}

// killNodesUnder SIGKILLs the local.process node processes whose helper's
// directory lies under root: the children of a supervisor (each leads its
// node's process group), then the supervisor; or, for nodes of earlier
// versions, a wrapper's process group. It waits until they are gone.
func killNodesUnder(root string) {
	var ours, groups []int
	for _, pid := range helperPIDs(root) {
		if argv := proctest.Cmdline(pid); len(argv) > 1 && argv[1] == process.SupervisorCommand {
			kids := childrenOf(pid)
			groups = append(groups, kids...)
			ours = append(ours, kids...)
		} else {
			groups = append(groups, pid)
		}
		ours = append(ours, pid)
	}
	for _, pid := range groups {
		_ = syscall.Kill(-pid, syscall.SIGKILL)
	}
	for _, pid := range ours {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		alive := false
		for _, pid := range ours {
			if proctest.Live(pid) {
				alive = true
			}
		}
		if !alive {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}
