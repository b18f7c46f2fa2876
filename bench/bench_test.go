// Package bench holds the benchmarks recorded in docs/benchmarks.md. Run
// them with `make bench`; they build the grove binary and run real agent
// and plugin processes.
package bench

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hashicorp/go-hclog"
	dcontainer "github.com/moby/moby/api/types/container"
	"github.com/moby/moby/client"
	"golang.org/x/sync/errgroup"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/protobuf/proto"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/containertest"
	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/plugins/builtin/container"
	"github.com/grovehq/grove/plugins/host"
	"github.com/grovehq/grove/plugins/sdk"
	pb "github.com/grovehq/grove/plugins/sdk/proto"
)

var groveBin string

// echoEnv makes the test binary serve the raw gRPC echo, so the baseline
// crosses a process boundary like a plugin call does.
const echoEnv = "GROVE_BENCH_ECHO_SOCKET"

type echoServer struct{ pb.UnimplementedEchoServer }

func (echoServer) Echo(_ context.Context, m *pb.EchoMessage) (*pb.EchoMessage, error) { return m, nil }

func TestMain(m *testing.M) {
	if sock := os.Getenv(echoEnv); sock != "" {
		ln, err := net.Listen("unix", sock)
		if err != nil {
			panic(err)
		}
		s := grpc.NewServer()
		pb.RegisterEchoServer(s, echoServer{})
		_ = s.Serve(ln)
		return
	}
	dir, err := os.MkdirTemp("", "grove-bench-bin")
	if err != nil {
		panic(err)
	}
	groveBin = filepath.Join(dir, "grove")
	if err := testbin.Build(groveBin, ".."); err != nil {
		panic(err)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var listenRE = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// startAgent runs a dev agent process and returns its client and pid.
func startAgent(b *testing.B, extra ...string) (*api.Client, *exec.Cmd) {
	dir := b.TempDir()
	args := append([]string{"agent", "-dev", "-bind", "127.0.0.1:0", "-data-dir", dir, "-log-level", "warn"}, extra...)
	cmd := exec.Command(groveBin, args...)
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	})
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
			go func() {
				for sc.Scan() {
				}
			}()
			return api.NewClient(m[1]), cmd
		}
	}
	b.Fatal("agent did not start")
	return nil, nil
}

// peakRSS reads VmHWM (peak resident set) of a process in MiB.
func peakRSS(pid int) float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmHWM:") {
			f := strings.Fields(line)
			kb, _ := strconv.Atoi(f[1])
			return float64(kb) / 1024
		}
	}
	return 0
}

func benchCreate(b *testing.B, nodes int) {
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		c, cmd := startAgent(b)
		ctx := context.Background()
		if _, err := c.Do(ctx, http.MethodPost, "/v1/profiles", nil, map[string]any{"profile": map[string]any{"name": "noop",
			"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{}}}}, nil); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		r, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{"name": "big", "profile_id": "noop", "desired_capacity": nodes}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		act, err := c.WaitAction(ctx, r.ActionID(), nil)
		if err != nil {
			b.Fatal(err)
		}
		// The action's own end time, not when polling noticed it: the
		// client's backoff would otherwise add up to a second.
		elapsed := time.UnixMicro(int64(act.EndTime * 1e6)).Sub(start)
		b.StopTimer()
		cl, err := c.GetCluster(ctx, "big")
		if err != nil {
			b.Fatal(err)
		}
		// Past api.MaxInlineIDs the cluster inlines a page of node ids and
		// counts the rest in its summary.
		total := len(cl.Nodes)
		if cl.NodesSummary != nil {
			total = cl.NodesSummary.Total
		}
		if cl.Status != "ACTIVE" || total != nodes {
			b.Fatalf("cluster: %v %v (%s)", cl.Status, err, act.StatusReason)
		}
		b.ReportMetric(float64(nodes)/elapsed.Seconds(), "nodes/s")
		b.ReportMetric(peakRSS(cmd.Process.Pid), "agent-peak-RSS-MiB")
	}
}

// BenchmarkCreateCluster1000 creates a 1,000-node grove.noop cluster through
// the API, the engine, the SQLite store and the out-of-process plugin.
func BenchmarkCreateCluster1000(b *testing.B) { benchCreate(b, 1000) }

// BenchmarkCreateCluster10000 is the same with 10,000 nodes.
func BenchmarkCreateCluster10000(b *testing.B) { benchCreate(b, 10000) }

// interleaved calls each f n times, round-robin so that drift in the
// machine's load touches every path alike, and returns p50 and p99 of each
// in microseconds.
func interleaved(b *testing.B, n int, fs ...func() error) (p50, p99 []float64) {
	d := make([][]time.Duration, len(fs))
	for i := range d {
		d[i] = make([]time.Duration, n)
	}
	for j := 0; j < n; j++ {
		for i, f := range fs {
			start := time.Now()
			if err := f(); err != nil {
				b.Fatal(err)
			}
			d[i][j] = time.Since(start)
		}
	}
	us := func(x time.Duration) float64 { return float64(x.Nanoseconds()) / 1000 }
	for i := range d {
		sort.Slice(d[i], func(x, y int) bool { return d[i][x] < d[i][y] })
		p50 = append(p50, us(d[i][n/2]))
		p99 = append(p99, us(d[i][n*99/100]))
	}
	return p50, p99
}

const calls = 5000

// BenchmarkPluginCall compares one profile check and one policy check
// through go-plugin with a bare gRPC echo to another process.
func BenchmarkPluginCall(b *testing.B) {
	sock := filepath.Join(b.TempDir(), "echo.sock")
	echo := exec.Command(os.Args[0])
	echo.Env = append(os.Environ(), echoEnv+"="+sock)
	echo.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	if err := echo.Start(); err != nil {
		b.Fatal(err)
	}
	defer func() { echo.Process.Kill(); echo.Wait() }()
	var conn *grpc.ClientConn
	for deadline := time.Now().Add(10 * time.Second); ; {
		if _, err := os.Stat(sock); err == nil {
			break
		}
		if time.Now().After(deadline) {
			b.Fatal("echo server did not start")
		}
		time.Sleep(10 * time.Millisecond)
	}
	conn, err := grpc.NewClient("unix://"+sock, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	ec := pb.NewEchoClient(conn)
	ctx := context.Background()

	h := host.New(hclog.NewNullLogger(), b.TempDir())
	defer h.Close()
	if err := h.Start(ctx, host.Config{Name: "builtin", Command: []string{groveBin, "plugin", "serve"}}); err != nil {
		b.Fatal(err)
	}
	client, _, err := h.Client(ctx, "profile", "grove.noop")
	if err != nil {
		b.Fatal(err)
	}
	// Specs carry ids as the engine's do (a stored spec's wire form is
	// encoded once per id).
	spec := sdk.Spec{ID: "prof-1", Name: "noop", Type: "grove.noop", Version: "1.0", Properties: map[string]any{}}
	node := []sdk.Node{{ID: "n1", Name: "n1", PhysicalID: "noop-n1"}}
	policy := sdk.Spec{ID: "pol-1", Name: "deletion", Type: "senlin.policy.deletion", Version: "1.1", Properties: map[string]any{"criteria": "OLDEST_FIRST"}}
	check := sdk.CheckRequest{Policy: policy, Phase: "BEFORE", Action: sdk.Action{Name: "CLUSTER_SCALE_IN", Inputs: map[string]any{"count": 1}},
		Cluster: sdk.Cluster{Nodes: []sdk.ClusterNode{{ID: "a", Status: "ACTIVE", CreatedAt: 1}, {ID: "b", Status: "ACTIVE", CreatedAt: 2}}}}
	payload := make([]byte, 64)
	trivial := check
	trivial.Policy = sdk.Spec{ID: "pol-2", Name: "scaling", Type: "senlin.policy.scaling", Version: "1.0", Properties: map[string]any{"event": "CLUSTER_SCALE_OUT"}}
	// Echoes of the same size as each plugin request isolate what the plugin
	// machinery adds from what the bytes cost.
	profileReq := &pb.BatchRequest{Profile: sdk.SpecToProto(spec), Nodes: []*pb.Node{sdk.NodeToProto(node[0])}}
	policyReq, _ := proto.Marshal(&pb.CheckRequest{Policy: sdk.SpecToProto(policy), Phase: check.Phase,
		Action:  &pb.ActionSnapshot{Action: check.Action.Name, InputsJson: []byte(`{"count":1}`)},
		Cluster: sdk.ClusterToProto(check.Cluster)})
	profileSized := make([]byte, proto.Size(profileReq))
	policySized := make([]byte, len(policyReq))

	for i := 0; i < b.N; i++ {
		// Warm up every path so no first-call costs are measured.
		for j := 0; j < 200; j++ {
			ec.Echo(ctx, &pb.EchoMessage{Payload: payload})
			client.Batch(ctx, sdk.CallCheck, spec, node)
			client.Check(ctx, check)
		}
		p50, p99 := interleaved(b, calls,
			func() error { _, err := ec.Echo(ctx, &pb.EchoMessage{Payload: payload}); return err },
			func() error { _, err := client.Batch(ctx, sdk.CallCheck, spec, node); return err },
			func() error { _, err := ec.Echo(ctx, &pb.EchoMessage{Payload: profileSized}); return err },
			func() error { _, err := client.Check(ctx, check); return err },
			func() error { _, err := ec.Echo(ctx, &pb.EchoMessage{Payload: policySized}); return err },
			// A policy that decides nothing at once: the machinery alone.
			func() error { _, err := client.Check(ctx, trivial); return err },
		)
		b.ReportMetric(p50[5], "policy-check-nothing-to-decide-p50-us")
		for k, name := range []string{"echo64", "profile-check", "echo-profile-size", "policy-check", "echo-policy-size"} {
			b.ReportMetric(p50[k], name+"-p50-us")
			b.ReportMetric(p99[k], name+"-p99-us")
		}
		b.ReportMetric(p50[1]/p50[2], "profile/same-size-echo-p50")
		b.ReportMetric(p50[3]/p50[4], "policy/same-size-echo-p50")
		b.ReportMetric(p50[1]/p50[0], "profile/echo64-p50")
		b.ReportMetric(p50[3]/p50[0], "policy/echo64-p50")
	}
}

// BenchmarkNodeReplacement measures the time from a node's death (its
// process killed) to its replacement running and answering HTTP, with a
// 1 s check interval and a 0 s restart delay: "event" when local.process
// streams the exit to the agent, "check" with driver events turned off, so
// the periodic check finds the death.
func BenchmarkNodeReplacement(b *testing.B) {
	b.Run("event", func(b *testing.B) { benchReplacement(b, true) })
	b.Run("check", func(b *testing.B) { benchReplacement(b, false) })
}

func benchReplacement(b *testing.B, events bool) {
	dir := b.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	os.WriteFile(cfg, []byte(fmt.Sprintf("orchestrator {\n  check_interval = \"1s\"\n  driver_events = %v\n}\n", events)), 0o644)
	c, _ := startAgent(b, "-config", cfg)
	ctx := context.Background()
	if _, err := c.Do(ctx, http.MethodPost, "/v1/profiles", nil, map[string]any{"profile": map[string]any{"name": "web",
		"spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{groveBin, "demo-http"}}}}}, nil); err != nil {
		b.Fatal(err)
	}
	r, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{"name": "r", "profile_id": "web", "desired_capacity": 1,
		"config": map[string]any{"grove.restart": map[string]any{"condition": "any", "delay": "0s"}}}}, nil)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := c.WaitAction(ctx, r.ActionID(), nil); err != nil {
		b.Fatal(err)
	}
	defer func() {
		r, err := c.Do(ctx, http.MethodDelete, "/v1/clusters/r", nil, nil, nil)
		if err == nil {
			c.WaitAction(ctx, r.ActionID(), nil)
		}
	}()
	var total, worst time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		nodes, err := c.ListNodes(ctx, map[string][]string{"cluster_id": {"r"}})
		if err != nil || len(nodes) != 1 {
			b.Fatalf("nodes: %v %v", nodes, err)
		}
		old := nodes[0]
		wrapper := int(old.Data["pid"].(float64))
		b.StartTimer()
		start := time.Now()
		// Kill the node's process group: the wrapper and the server.
		if err := syscall.Kill(-wrapper, syscall.SIGKILL); err != nil {
			b.Fatal(err)
		}
		for {
			n, err := c.GetNode(ctx, old.ID)
			if err == nil && n.Status == "ACTIVE" && n.Data["pid"] != old.Data["pid"] {
				if resp, err := http.Get("http://" + n.Data["address"].(string) + "/"); err == nil {
					resp.Body.Close()
					break
				}
			}
			if time.Since(start) > time.Minute {
				b.Fatal("the node was not replaced within a minute")
			}
			time.Sleep(5 * time.Millisecond)
		}
		took := time.Since(start)
		total += took
		worst = max(worst, took)
		b.StopTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/replacement")
	b.ReportMetric(worst.Seconds(), "s-worst")
}

// BenchmarkContainers50 creates 50 containers of the demo image on the
// same engine four ways per iteration: as a Grove cluster (API request to
// the CLUSTER_CREATE action's end; the driver creates 8 at once), with the
// moby client creating and starting the same containers directly from 8
// goroutines (the floor on that engine at Grove's concurrency), and with
// `xargs -P4` and `xargs -P8 docker run -d` (host networking, a port each,
// the same limits). It needs a container engine (DOCKER_HOST, or podman and
// runc for scripts/engine.sh) and the docker CLI.
func BenchmarkContainers50(b *testing.B) {
	const n = 50
	dockerHost, err := containertest.Ensure()
	if err != nil {
		b.Skip(err)
	}
	dockerCLI, err := exec.LookPath("docker")
	if err != nil {
		b.Skip("the baseline needs the docker CLI on PATH")
	}
	eng, err := client.New(client.WithHost(dockerHost))
	if err != nil {
		b.Fatal(err)
	}
	defer eng.Close()
	c, _ := startAgent(b)
	ctx := context.Background()
	if _, err := c.Do(ctx, http.MethodPost, "/v1/profiles", nil, map[string]any{"profile": map[string]any{"name": "box",
		"spec": map[string]any{"type": "container.docker", "version": "1.0", "properties": map[string]any{
			"image": container.DemoImage, "memory": 64, "stop_timeout": 1}}}}, nil); err != nil {
		b.Fatal(err)
	}
	removeBaseline := func() {
		rm := exec.Command("sh", "-c", dockerCLI+` rm -f $(`+dockerCLI+` ps -aq --filter label=grove.bench=true)`)
		rm.Env = append(os.Environ(), "DOCKER_HOST="+dockerHost)
		if out, err := rm.CombinedOutput(); err != nil {
			b.Fatalf("remove the baseline's containers: %v\n%s", err, out)
		}
	}
	var groveTotal, directTotal time.Duration
	xargsTotal := map[int]time.Duration{}
	for i := 0; i < b.N; i++ {
		start := time.Now()
		r, err := c.Do(ctx, http.MethodPost, "/v1/clusters", nil, map[string]any{"cluster": map[string]any{"name": "boxes", "profile_id": "box", "desired_capacity": n}}, nil)
		if err != nil {
			b.Fatal(err)
		}
		act, err := c.WaitAction(ctx, r.ActionID(), nil)
		if err != nil || act.Status != "SUCCEEDED" {
			b.Fatalf("create: %v %s", err, act.StatusReason)
		}
		groveTotal += time.UnixMicro(int64(act.EndTime * 1e6)).Sub(start)
		r, err = c.Do(ctx, http.MethodDelete, "/v1/clusters/boxes", nil, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := c.WaitAction(ctx, r.ActionID(), nil); err != nil {
			b.Fatal(err)
		}

		start = time.Now()
		if err := createDirect(ctx, eng, fmt.Sprintf("bench-direct-%d", i), n, 8); err != nil {
			b.Fatal(err)
		}
		directTotal += time.Since(start)
		removeBaseline()

		for _, par := range []int{4, 8} {
			var lines strings.Builder
			for j := 0; j < n; j++ {
				fmt.Fprintf(&lines, "--name bench-%d-%d-%d --label grove.bench=true --network host --memory 64m --stop-timeout 1 -e PORT=%d -e GROVE_NODE_NAME=bench-%d %s\n",
					par, i, j, freePort(b), j, container.DemoImage)
			}
			xargs := exec.Command("xargs", "-P"+strconv.Itoa(par), "-L1", dockerCLI, "run", "-d")
			xargs.Stdin = strings.NewReader(lines.String())
			xargs.Env = append(os.Environ(), "DOCKER_HOST="+dockerHost)
			start = time.Now()
			if out, err := xargs.CombinedOutput(); err != nil {
				b.Fatalf("xargs -P%d docker run: %v\n%s", par, err, out)
			}
			xargsTotal[par] += time.Since(start)
			removeBaseline()
		}
	}
	per := func(d time.Duration) float64 { return d.Seconds() / float64(b.N) }
	b.ReportMetric(per(groveTotal), "grove-s")
	b.ReportMetric(per(directTotal), "direct-s")
	b.ReportMetric(per(xargsTotal[4]), "xargs4-s")
	b.ReportMetric(per(xargsTotal[8]), "xargs8-s")
	b.ReportMetric(groveTotal.Seconds()/directTotal.Seconds(), "grove/direct")
	b.ReportMetric(groveTotal.Seconds()/xargsTotal[8].Seconds(), "grove/xargs8")
}

// freePort is a 127.0.0.1 port free when asked, for a baseline container.
func freePort(b *testing.B) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// createDirect creates and starts n demo containers as the driver does
// (host network, a port each, 64 MiB, stop timeout 1 s), from conc
// goroutines through one moby client: what the engine itself costs.
func createDirect(ctx context.Context, eng *client.Client, prefix string, n, conc int) error {
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(conc)
	for j := 0; j < n; j++ {
		name, port := fmt.Sprintf("%s-%d", prefix, j), 0
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		port = l.Addr().(*net.TCPAddr).Port
		l.Close()
		g.Go(func() error {
			stop := 1
			cfg := &dcontainer.Config{Image: container.DemoImage, StopTimeout: &stop, Labels: map[string]string{"grove.bench": "true"},
				Env: []string{"PORT=" + strconv.Itoa(port), "GROVE_NODE_NAME=" + name}}
			hc := &dcontainer.HostConfig{NetworkMode: "host", Resources: dcontainer.Resources{Memory: 64 << 20}}
			created, err := eng.ContainerCreate(ctx, client.ContainerCreateOptions{Name: name, Config: cfg, HostConfig: hc})
			if err != nil {
				return fmt.Errorf("create %s: %w", name, err)
			}
			if _, err := eng.ContainerStart(ctx, created.ID, client.ContainerStartOptions{}); err != nil {
				return fmt.Errorf("start %s: %w", name, err)
			}
			return nil
		})
	}
	return g.Wait()
}
