package bench

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/grovehq/grove/internal/proctest"
)

// processNodes is the size of BenchmarkProcesses500.
const processNodes = 500

// supervisordBin is Debian's supervisord, the reference of
// BenchmarkProcesses500 (.ci/run installs the package).
const supervisordBin = "/usr/bin/supervisord"

// BenchmarkProcesses500 compares starting and stopping 500 local.process
// nodes with supervisord doing the same, in one run (issue 24: start
// within 1.0× of supervisord, teardown within 1.5×, and at most 50 MiB of
// helper processes beyond the nodes' own for 500).
//
// Grove: a `grove agent -dev` creates a 500-node local.process cluster of
// `sleep 3600`; the start time runs from POST /v1/clusters to the
// CLUSTER_CREATE action's end time, the teardown from DELETE to the
// CLUSTER_DELETE action's end (a node's delete ends only when its process
// is gone). Supervisord: 500 [program:x] entries of the same command
// (startsecs=0, so a program is RUNNING once it is spawned, as a Grove
// node is ACTIVE once its process started), run with `supervisord -c conf
// -n`; the start time runs from exec until getAllProcessInfo over its unix
// socket reports 500 RUNNING, the teardown from SIGTERM until all 500
// processes are gone.
//
// Memory: the summed RSS (and PSS, which shares the pages of one binary
// among its processes) of the helpers Grove runs beside the nodes —
// the per-node wrappers or the per-agent supervisor, found by their argv
// naming a directory under this run's temp dir — and of supervisord.
func BenchmarkProcesses500(b *testing.B) {
	if _, err := os.Stat(supervisordBin); err != nil {
		b.Skipf("supervisord is not installed (%v); apt-get install supervisor", err)
	}
	for i := 0; i < b.N; i++ {
		b.Logf("load average before: %s", loadavg())
		gStart, gStop, gRSS, gPSS := groveProcesses(b)
		b.Logf("load average between: %s", loadavg())
		sStart, sStop, sRSS, sPSS := supervisordProcesses(b)
		b.Logf("load average after: %s", loadavg())
		b.Logf("grove: start %v, teardown %v, helpers RSS %.1f MiB PSS %.1f MiB", gStart, gStop, gRSS, gPSS)
		b.Logf("supervisord: start %v, teardown %v, RSS %.1f MiB PSS %.1f MiB", sStart, sStop, sRSS, sPSS)
		b.ReportMetric(gStart.Seconds(), "grove-start-s")
		b.ReportMetric(gStop.Seconds(), "grove-teardown-s")
		b.ReportMetric(sStart.Seconds(), "supervisord-start-s")
		b.ReportMetric(sStop.Seconds(), "supervisord-teardown-s")
		b.ReportMetric(gStart.Seconds()/sStart.Seconds(), "start-ratio")
		b.ReportMetric(gStop.Seconds()/sStop.Seconds(), "teardown-ratio")
		b.ReportMetric(gRSS, "grove-helpers-RSS-MiB")
		b.ReportMetric(gPSS, "grove-helpers-PSS-MiB")
		b.ReportMetric(sRSS, "supervisord-RSS-MiB")
	}
}

// groveProcesses runs the Grove half of BenchmarkProcesses500.
func groveProcesses(b *testing.B) (start, stop time.Duration, rss, pss float64) {
	b.Helper()
	c, cmd := startAgent(b)
	agentDir := agentDataDir(b, cmd)
	ctx := context.Background()
	b.Cleanup(func() { killNodesUnder(agentDir) })
	post(b, c, "/v1/profiles", map[string]any{"profile": map[string]any{"name": "sleep",
		"spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{
			"command": []string{"sleep", "3600"}, "stop_timeout": 10}}}})
	_, start = createTimed(b, c, "procs", "sleep", processNodes, nil)
	helpers := helperPIDs(agentDir)
	if len(helpers) == 0 {
		b.Fatalf("no local.process helper process found under %s", agentDir)
	}
	var anon float64
	rss, pss, anon = memAnon(helpers)
	b.Logf("grove: %d helper processes, anonymous memory %.1f MiB", len(helpers), anon)
	t0 := time.Now()
	r, err := c.Do(ctx, http.MethodDelete, "/v1/clusters/procs", nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	act, err := c.WaitAction(ctx, r.ActionID(), nil)
	if err != nil {
		b.Fatal(err)
	}
	if act.Status != "SUCCEEDED" {
		b.Fatalf("delete: %s %s", act.Status, act.StatusReason)
	}
	stop = time.UnixMicro(int64(act.EndTime * 1e6)).Sub(t0)
	_ = cmd.Process.Signal(os.Interrupt)
	_ = cmd.Wait()
	return start, stop, rss, pss
}

// agentDataDir is the -data-dir of a startAgent agent.
func agentDataDir(b *testing.B, cmd *exec.Cmd) string {
	for i, a := range cmd.Args {
		if a == "-data-dir" && i+1 < len(cmd.Args) {
			return cmd.Args[i+1]
		}
	}
	b.Fatal("the agent has no -data-dir")
	return ""
}

// helperPIDs are the local.process helpers (per-node wrappers or the
// per-agent supervisor) whose directory argument lies under root, so only
// this run's.
func helperPIDs(root string) []int {
	var out []int
	for _, pid := range proctest.PIDs() {
		if strings.HasPrefix(proctest.HelperDir(proctest.Cmdline(pid)), root+string(filepath.Separator)) {
			out = append(out, pid)
		}
	}
	return out
}

// memAnon sums the RSS, PSS and anonymous memory (heap, stacks: what is
// not the pages of a binary or library, which the page cache shares) of
// pids, from smaps_rollup, in MiB.
func memAnon(pids []int) (rss, pss, anon float64) {
	for _, pid := range pids {
		body, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps_rollup", pid))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(body), "\n") {
			f := strings.Fields(line)
			if len(f) < 2 {
				continue
			}
			kb, _ := strconv.ParseFloat(f[1], 64)
			switch f[0] {
			case "Rss:":
				rss += kb / 1024
			case "Pss:":
				pss += kb / 1024
			case "Anonymous:":
				anon += kb / 1024
			}
		}
	}
	return rss, pss, anon
}

// childrenOf lists the processes whose parent is pid.
func childrenOf(pid int) []int {
	var out []int
	for _, p := range proctest.PIDs() {
		if proctest.PPID(p) == pid {
			out = append(out, p)
		}
	}
	return out
}

// supervisordProcesses runs the supervisord half of BenchmarkProcesses500.
func supervisordProcesses(b *testing.B) (start, stop time.Duration, rss, pss float64) {
	b.Helper()
	dir := b.TempDir()
	sock := filepath.Join(dir, "supervisor.sock")
	var conf strings.Builder
	fmt.Fprintf(&conf, "[unix_http_server]\nfile=%s\n\n[supervisord]\nlogfile=%s\npidfile=%s\nchildlogdir=%s\nnodaemon=true\n\n",
		sock, filepath.Join(dir, "supervisord.log"), filepath.Join(dir, "supervisord.pid"), dir)
	fmt.Fprintf(&conf, "[rpcinterface:supervisor]\nsupervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface\n\n[supervisorctl]\nserverurl=unix://%s\n\n", sock)
	for i := range processNodes {
		// The output goes to a file per program, as a Grove node's does.
		fmt.Fprintf(&conf, "[program:p%d]\ncommand=sleep 3600\nstartsecs=0\nautorestart=false\nstdout_logfile=%s\nredirect_stderr=true\n\n",
			i, filepath.Join(dir, fmt.Sprintf("p%d.log", i)))
	}
	cfg := filepath.Join(dir, "supervisord.conf")
	if err := os.WriteFile(cfg, []byte(conf.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(supervisordBin, "-c", cfg, "-n")
	cmd.Dir = dir
	var logs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logs, &logs
	t0 := time.Now()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	pid := cmd.Process.Pid
	b.Cleanup(func() {
		for _, c := range childrenOf(pid) {
			_ = syscall.Kill(c, syscall.SIGKILL)
		}
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", sock)
	}}}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		if n := supervisordRunning(hc); n == processNodes {
			start = time.Since(t0)
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("supervisord did not report %d programs RUNNING within 5 minutes\n%s", processNodes, logs.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	kids := childrenOf(pid)
	if len(kids) != processNodes {
		b.Fatalf("supervisord has %d children, want %d", len(kids), processNodes)
	}
	var anon float64
	rss, pss, anon = memAnon([]int{pid})
	b.Logf("supervisord: anonymous memory %.1f MiB", anon)
	t0 = time.Now()
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		b.Fatal(err)
	}
	for deadline := time.Now().Add(2 * time.Minute); ; {
		alive := 0
		for _, k := range kids {
			if proctest.Live(k) {
				alive++
			}
		}
		if alive == 0 {
			stop = time.Since(t0)
			break
		}
		if time.Now().After(deadline) {
			b.Fatalf("%d of supervisord's processes still run 2 minutes after SIGTERM", alive)
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = cmd.Wait()
	return start, stop, rss, pss
}

// supervisordRunning asks supervisord over its unix socket (XML-RPC
// supervisor.getAllProcessInfo) how many programs are RUNNING; -1 when it
// does not answer yet.
func supervisordRunning(hc *http.Client) int {
	body := `<?xml version="1.0"?><methodCall><methodName>supervisor.getAllProcessInfo</methodName><params></params></methodCall>`
	resp, err := hc.Post("http://supervisord/RPC2", "text/xml", strings.NewReader(body))
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		return -1
	}
	return strings.Count(buf.String(), "<string>RUNNING</string>")
}
