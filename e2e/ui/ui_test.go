// Package ui tests the web console in a real browser: headless Chromium,
// driven with chromedp, against a real `grove agent` process on loopback.
package ui

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/grovehq/grove/internal/testbin"
)

const chromium = "/usr/bin/chromium"

var groveBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	if _, err := os.Stat(chromium); err != nil {
		// Only the browser tests need the binary; without a browser they
		// skip, and there is nothing to build.
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "grove-ui-bin")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	groveBin = filepath.Join(dir, "grove")
	if err := testbin.Build(groveBin, "../.."); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return m.Run()
}

// agent is a running `grove agent` process.
type agent struct {
	t     *testing.T
	cmd   *exec.Cmd
	addr  string
	token string
	log   string
	// dataDir is the agent's: local.process's wrappers name their node's
	// runtime directory under it, which tells this test's nodes apart.
	dataDir string
}

var listenRE = regexp.MustCompile(`listening on (http://127\.0\.0\.1:\d+)`)

// startAgent starts grove agent on a free loopback port with args.
func startAgent(t *testing.T, dataDir string, args ...string) *agent {
	t.Helper()
	a := &agent{t: t, log: filepath.Join(dataDir, "agent.log")}
	logf, err := os.Create(a.log)
	if err != nil {
		t.Fatal(err)
	}
	a.cmd = exec.Command(groveBin, append([]string{"agent", "-data-dir", dataDir, "-log-level", "debug"}, args...)...)
	stdout, _ := a.cmd.StdoutPipe()
	a.cmd.Stderr = logf
	a.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := a.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	found := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := listenRE.FindStringSubmatch(sc.Text()); m != nil {
				found <- m[1]
			}
		}
	}()
	select {
	case a.addr = <-found:
	case <-time.After(60 * time.Second):
		_ = a.cmd.Process.Kill()
		t.Fatalf("the agent did not start; log:\n%s", a.logText())
	}
	a.dataDir = dataDir
	t.Cleanup(func() {
		a.stop()
		logf.Close()
	})
	return a
}

// stop interrupts the agent and waits for it; again, it does nothing.
func (a *agent) stop() {
	if a.cmd.ProcessState != nil {
		return
	}
	_ = a.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = a.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = a.cmd.Process.Kill()
		<-done
	}
}

func (a *agent) logText() string {
	b, _ := os.ReadFile(a.log)
	return string(b)
}

// do calls the API and decodes its answer into out; it returns the status.
func (a *agent) do(method, path string, body, out any) int {
	a.t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, a.addr+path, rd)
	req.Header.Set("Content-Type", "application/json")
	if a.token != "" {
		req.Header.Set("X-Auth-Token", a.token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		a.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		a.t.Fatalf("%s %s: %s: %s", method, path, resp.Status, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			a.t.Fatalf("%s %s: decode %s: %v", method, path, b, err)
		}
	}
	return resp.StatusCode
}

type node struct {
	ID          string         `json:"id"`
	Name        string         `json:"name"`
	Status      string         `json:"status"`
	ProfileName string         `json:"profile_name"`
	Data        map[string]any `json:"data"`
}

func (a *agent) nodes(cluster string) []node {
	var out struct {
		Nodes []node `json:"nodes"`
	}
	a.do("GET", "/v1/nodes?sort=index&cluster_id="+cluster, nil, &out)
	return out.Nodes
}

// eventually polls cond until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(d)
	for {
		ok, info := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last seen: %s", d, what, info)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// browser starts headless Chromium with a fresh profile, for this test
// only, and returns its context.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromium); err != nil {
		t.Skipf("the console's browser tests need Chromium at %s (apt-get install chromium): %v", chromium, err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(chromium), chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.WindowSize(1280, 900),
	}
	actx, cancelA := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelB := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelB(); cancelA() })
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return ctx
}

// page is a browser tab on the console.
type page struct {
	t   *testing.T
	ctx context.Context
	dir string // where screenshots go
}

func newPage(t *testing.T, ctx context.Context) *page {
	dir := os.Getenv("GROVE_UI_SCREENSHOTS")
	if dir == "" {
		dir = t.TempDir()
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return &page{t: t, ctx: ctx, dir: dir}
}

func (p *page) run(what string, steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	for try := 1; ; try++ {
		err := chromedp.Do(ctx, steps...)
		// A live refresh may replace the page's elements between a step's
		// query and its action; the steps query again. Each step that
		// found no node did nothing, so running them again is safe.
		// (Chromium says it two ways, depending on the call that missed.)
		if err != nil && (strings.Contains(err.Error(), "No node with given id") ||
			strings.Contains(err.Error(), "Could not find node with given id")) && try < 5 {
			continue
		}
		if err != nil {
			p.t.Fatalf("%s: %v", what, err)
		}
		return
	}
}

// eval evaluates a JavaScript expression in the page.
func eval[T any](p *page, expr string) (T, error) {
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	return chromedp.Run(ctx, chromedp.Evaluate[T](expr))
}

// waitFor polls a JavaScript expression until it yields true; info is an
// expression whose value the failure shows.
func (p *page) waitFor(d time.Duration, what, expr string) {
	p.t.Helper()
	eventually(p.t, d, what, func() (bool, string) {
		ok, err := eval[bool](p, expr)
		if err != nil {
			return false, err.Error()
		}
		text, _ := eval[string](p, `location.href + ' | ' + document.readyState + ' | ' + document.body.innerText.slice(0, 1500)`)
		return ok, text
	})
}

func (p *page) text(sel string) string {
	p.t.Helper()
	s, err := eval[string](p, fmt.Sprintf(`(document.querySelector(%q)||{}).innerText||''`, sel))
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

func (p *page) screenshot(name string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, 30*time.Second)
	defer cancel()
	buf, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		p.t.Fatalf("screenshot %s: %v", name, err)
	}
	if err := os.WriteFile(filepath.Join(p.dir, name+".png"), buf, 0o644); err != nil {
		p.t.Fatal(err)
	}
}

// nodeRows is a JavaScript expression: the nodes table's rows as
// [name, status, restarts, process].
const nodeRows = `[...document.querySelectorAll('table')].filter(t => t.querySelector('caption') && / nodes$/.test(t.querySelector('caption').innerText))
  .flatMap(t => [...t.tBodies[0].rows].map(r => [r.cells[0].innerText, r.cells[1].innerText.replace(/^\W+/, ''), r.cells[5].innerText, r.cells[6].innerText]))`

func activeNodes(n int) string {
	return fmt.Sprintf(`(() => { const r = %s; return r.length === %d && r.every(x => x[1] === 'ACTIVE'); })()`, nodeRows, n)
}
