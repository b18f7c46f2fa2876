package bench

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/proctest"
)

// clockTicks is the kernel's USER_HZ, the unit of utime and stime in
// /proc/<pid>/stat: 100 on every Linux architecture Go supports.
const clockTicks = 100

// procCPU is the CPU time (user and system) a process has used, read from
// /proc/<pid>/stat. Its waited-for children are not counted.
func procCPU(pid int) (time.Duration, error) {
	f := proctest.Stat(pid)
	if len(f) < 13 {
		return 0, fmt.Errorf("read the stat of process %d: it is gone", pid)
	}
	// utime and stime are fields 14 and 15 of stat.
	ut, err1 := strconv.ParseInt(f[14-3], 10, 64)
	st, err2 := strconv.ParseInt(f[15-3], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("read the stat of process %d: %q", pid, f)
	}
	return time.Duration(ut+st) * time.Second / clockTicks, nil
}

// childPIDs are a process's direct children (its plugins, for an agent).
func childPIDs(pid int) []int {
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/children", pid))
	var out []int
	for _, t := range tasks {
		b, _ := os.ReadFile(t)
		for _, f := range strings.Fields(string(b)) {
			if p, err := strconv.Atoi(f); err == nil {
				out = append(out, p)
			}
		}
	}
	return out
}

// healthRounds reads grove_health_rounds_total from the agent's metrics.
func healthRounds(ctx context.Context, c *api.Client) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.Address+"/metrics", nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "grove_health_rounds_total "); ok {
			f, err := strconv.ParseFloat(v, 64)
			return int(f), err
		}
	}
	return 0, fmt.Errorf("no grove_health_rounds_total in the agent's metrics")
}

// waitRounds waits until the agent has started at least n health rounds.
// It polls the metrics only every 100 ms: each poll costs the agent CPU.
func waitRounds(b *testing.B, c *api.Client, n int) {
	ctx := context.Background()
	deadline := time.Now().Add(10 * time.Minute)
	for {
		got, err := healthRounds(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		if got >= n {
			return
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d health rounds after 10 minutes, want %d", got, n)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// cpuWindow is what a process spent in a window of wall time, and how
// many health rounds the agent started in it.
type cpuWindow struct {
	agent, plugins time.Duration
	wall           time.Duration
	rounds         int
}

// measure reads the agent's and its plugins' CPU time and the agent's
// round count at both ends of a window of d: two metrics reads, nothing
// between, so the measuring costs the agent nothing in the window.
func measure(b *testing.B, c *api.Client, pid int, d time.Duration) cpuWindow {
	ctx := context.Background()
	plugins := childPIDs(pid)
	read := func() (time.Duration, time.Duration, int, time.Time) {
		r, err := healthRounds(ctx, c)
		if err != nil {
			b.Fatal(err)
		}
		a, err := procCPU(pid)
		if err != nil {
			b.Fatal(err)
		}
		var p time.Duration
		for _, pp := range plugins {
			t, _ := procCPU(pp)
			p += t
		}
		return a, p, r, time.Now()
	}
	a0, p0, r0, t0 := read()
	time.Sleep(d)
	a1, p1, r1, t1 := read()
	return cpuWindow{agent: a1 - a0, plugins: p1 - p0, wall: t1.Sub(t0), rounds: r1 - r0}
}

// BenchmarkHealthCheck measures what health checks cost the agent: a
// `grove agent -dev` process (SQLite, the built-in plugins in their own
// process) with a 1 s check interval holds one cluster of 10,000 or
// 100,000 grove.noop nodes. The agent's CPU time is utime + stime of the
// agent process in /proc (the plugin processes apart), read at both ends
// of windows of wall time in which the benchmark does nothing else.
// agent-idle-ms/s is the agent's rate before the cluster exists (its
// heartbeats, polls and empty rounds). Once the cluster is created and
// has been checked, the benchmark takes four windows of 10 s (with
// 100,000 nodes, 30 s) and keeps the one that cost least per round, so
// a burst of other work (the reaper deleting the creation's finished
// actions) is not counted as checking: agent-µs/node/check is that
// window's agent CPU over rounds × nodes, idle included;
// net-agent-µs/node/check subtracts the idle rate. plugin-µs/node/check is
// the same for the plugin processes; s/round is the window's wall time
// per round (a round slower than the interval runs back to back).
func BenchmarkHealthCheck(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(strconv.Itoa(n), func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				benchHealth(b, n)
			}
		})
	}
}

func benchHealth(b *testing.B, n int) {
	ctx := context.Background()
	cfg := filepath.Join(b.TempDir(), "agent.hcl")
	conf := fmt.Sprintf("workers {\n  max_nodes_per_cluster = %d\n}\norchestrator {\n  check_interval = \"1s\"\n}\n", n)
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		b.Fatal(err)
	}
	c, cmd := startAgent(b, "-config", cfg)
	pid := cmd.Process.Pid
	if _, err := c.Do(ctx, http.MethodPost, "/v1/profiles", nil, map[string]any{"profile": map[string]any{"name": "noop",
		"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{}}}}, nil); err != nil {
		b.Fatal(err)
	}
	idleWin := measure(b, c, pid, 5*time.Second)
	idle := float64(idleWin.agent.Microseconds()) / 1e3 / idleWin.wall.Seconds()

	createNoop(b, c, "big", n, nil)
	// Two rounds past the creation: the cluster has been checked.
	r1, err := healthRounds(ctx, c)
	if err != nil {
		b.Fatal(err)
	}
	waitRounds(b, c, r1+2)
	window := 10 * time.Second
	if n > 10000 {
		window = 30 * time.Second
	}
	var best cpuWindow
	b.StartTimer()
	for range 4 {
		w := measure(b, c, pid, window)
		if w.rounds == 0 {
			continue
		}
		if best.rounds == 0 || float64(w.agent)/float64(w.rounds) < float64(best.agent)/float64(best.rounds) {
			best = w
		}
	}
	b.StopTimer()
	if best.rounds == 0 {
		b.Fatalf("no health round in %v", 4*window)
	}
	cl, err := c.GetCluster(ctx, "big")
	if err != nil {
		b.Fatal(err)
	}
	if cl.Status != "ACTIVE" {
		b.Fatalf("cluster %s after the checks: %s", cl.Status, cl.StatusReason)
	}
	checks := float64(best.rounds * n)
	b.ReportMetric(float64(best.agent.Microseconds())/checks, "agent-µs/node/check")
	b.ReportMetric((float64(best.agent.Microseconds())-idle*1e3*best.wall.Seconds())/checks, "net-agent-µs/node/check")
	b.ReportMetric(float64(best.plugins.Microseconds())/checks, "plugin-µs/node/check")
	b.ReportMetric(best.wall.Seconds()/float64(best.rounds), "s/round")
	b.ReportMetric(idle, "agent-idle-ms/s")
	b.ReportMetric(peakRSS(pid), "agent-peak-RSS-MiB")
	if dir := os.Getenv(profileEnv); dir != "" {
		saveProfile(b, c, filepath.Join(dir, fmt.Sprintf("health-%d.pprof", n)), 3*best.wall/time.Duration(best.rounds))
	}
}

// profileEnv names a directory: when set, BenchmarkHealthCheck also saves
// a CPU profile of the agent over two more rounds there, for `go tool pprof`.
const profileEnv = "GROVE_BENCH_PROFILE_DIR"

// saveProfile saves the agent's CPU profile over d to file.
func saveProfile(b *testing.B, c *api.Client, file string, d time.Duration) {
	if err := fetchProfile(c, file, d); err != nil {
		b.Fatal(err)
	}
}

// fetchProfile is saveProfile for a goroutine beside the benchmark's own
// (which alone may end the benchmark): it returns its error.
func fetchProfile(c *api.Client, file string, d time.Duration) error {
	secs := max(1, int(d.Seconds()+0.5))
	req, err := http.NewRequest(http.MethodGet, fmt.Sprintf("%s/debug/pprof/profile?seconds=%d", c.Address, secs), nil)
	if err != nil {
		return err
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return fmt.Errorf("profile the agent: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("profile the agent: %s", resp.Status)
	}
	out, err := os.Create(file)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, resp.Body); err != nil {
		out.Close()
		return fmt.Errorf("save the agent's profile: %w", err)
	}
	return out.Close()
}
