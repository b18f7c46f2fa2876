package ui

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/grovehq/grove/internal/proctest"
)

// TestConsole walks the console through an operator's day on a real dev
// agent: a cluster made through the API appears in the list; its page
// shows three ACTIVE nodes; a node whose process is killed is seen to go
// and come back, live; a resize from the console gets five nodes; a
// rolling update from the console shows its batches; a failed action's
// page gives its reason; and the cluster is deleted through the
// confirmation dialog.
func TestConsole(t *testing.T) {
	ctx := browser(t)
	a := startAgent(t, t.TempDir(), "-dev", "-bind", "127.0.0.1:0")
	p := newPage(t, ctx)

	web := func(name string, env map[string]any) {
		props := map[string]any{"command": []any{groveBin, "demo-http"}, "stop_timeout": 5}
		if env != nil {
			props["env"] = env
		}
		a.do("POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": name,
			"spec": map[string]any{"type": "local.process", "version": "1.0", "properties": props}}}, nil)
	}
	web("ui-web", nil)
	web("ui-web-v2", map[string]any{"GREETING": "v2"})
	a.do("POST", "/v1/policies", map[string]any{"policy": map[string]any{"name": "ui-batches",
		"spec": map[string]any{"type": "senlin.policy.batch", "version": "1.0",
			// The pause between batches is the window in which the test's
			// stop must land: the page learns of a batch through its
			// event stream, and on a loaded machine it showed batch 2
			// more than 3 s after batch 3 had begun.
			"properties": map[string]any{"min_in_service": 3, "max_batch_size": 2, "pause_time": 10}}}}, nil)
	a.do("POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "ui-web", "profile_id": "ui-web", "desired_capacity": 3}}, nil)
	t.Cleanup(func() { killNodes(a, "ui-web") })

	// The list shows the cluster the API made.
	p.run("open the console", chromedp.Navigate(a.addr+"/ui/"))
	p.waitFor(20*time.Second, "the cluster in the list", `[...document.querySelectorAll('tbody th a')].some(a => a.innerText === 'ui-web')`)
	p.waitFor(20*time.Second, "live updates on", `document.getElementById('live').dataset.state === 'live'`)
	p.waitFor(20*time.Second, "the cluster ACTIVE with 3 of 3", `document.querySelector('tbody tr').innerText.includes('ACTIVE') && document.querySelector('tbody tr').innerText.includes('3 / 3')`)
	p.screenshot("clusters")
	// The filter narrows the list, and says so when nothing is left.
	p.run("filter", chromedp.SetValue(chromedp.CSS(`form[aria-label="Filter clusters"] input`), "no-such"),
		chromedp.Click(chromedp.CSS(`form[aria-label="Filter clusters"] button`)))
	p.waitFor(20*time.Second, "no cluster matching", `location.hash.includes('q=no-such') && document.querySelector('main').innerText.includes('No clusters match.')`)
	p.run("filter again", chromedp.SetValue(chromedp.CSS(`form[aria-label="Filter clusters"] input`), "ui-w"),
		chromedp.Click(chromedp.CSS(`form[aria-label="Filter clusters"] button`)))
	p.waitFor(20*time.Second, "the cluster matching", `location.hash.includes('q=ui-w') && [...document.querySelectorAll('tbody th a')].some(a => a.innerText === 'ui-web')`)

	// Its page: three ACTIVE nodes.
	p.run("open the cluster", chromedp.Click(chromedp.CSS(`tbody th a`)))
	p.waitFor(20*time.Second, "three ACTIVE nodes", activeNodes(3))
	p.screenshot("cluster")

	// Kill a node's process, by the pid the API gives: the page shows it
	// go and come back, restarted, without a reload.
	p.run("watch node statuses", evalStep(`window.seen = []; window.marker = 'same page';
	  new MutationObserver(() => { try { window.seen.push(...`+nodeRows+`.map(r => r[0] + ' ' + r[1])); } catch {} })
	    .observe(document.querySelector('main'), {childList: true, subtree: true}); true`))
	victim := a.nodes("ui-web")[0]
	pid, _ := victim.Data["pid"].(float64)
	if pid <= 1 {
		t.Fatalf("node %s has no pid in its data: %v", victim.Name, victim.Data)
	}
	killed := time.Now()
	if err := syscall.Kill(int(pid), syscall.SIGKILL); err != nil {
		t.Fatalf("kill node %s's process %d: %v", victim.Name, int(pid), err)
	}
	p.waitFor(30*time.Second, "the killed node seen down", fmt.Sprintf(`window.seen.some(s => s.startsWith(%q) && !s.endsWith(' ACTIVE'))`, victim.Name+" "))
	t.Logf("the console showed node %s down %s after its process was killed", victim.Name, time.Since(killed).Round(10*time.Millisecond))
	p.waitFor(30*time.Second, "the killed node back and restarted", fmt.Sprintf(`(() => { const r = %s.find(r => r[0] === %q); return r && r[1] === 'ACTIVE' && r[2] === '1' && r[3] !== 'pid %d'; })()`, nodeRows, victim.Name, int(pid)))
	same, _ := eval[string](p, `window.marker || ''`)
	if same != "same page" {
		t.Fatal("the page reloaded; live updates should change it in place")
	}

	// Scale to five from the console.
	p.run("resize to 5", chromedp.SetValue(chromedp.CSS(`form[aria-label="Resize"] input`), "5"),
		chromedp.Click(chromedp.CSS(`form[aria-label="Resize"] button`)))
	p.waitFor(20*time.Second, "the resize's action linked", `(document.getElementById('flash')||{innerText:''}).innerText.includes('Resize: accepted.') && !!document.querySelector('#flash a[href^="#/actions/"]')`)
	p.waitFor(30*time.Second, "five ACTIVE nodes", activeNodes(5))

	// A rolling update from the console, in batches of two.
	p.run("attach the batch policy", chromedp.SetValue(chromedp.CSS(`form[aria-label="Attach policy"] select`), policyID(a, "ui-batches")),
		chromedp.Click(chromedp.CSS(`form[aria-label="Attach policy"] button`)))
	p.waitFor(30*time.Second, "the policy bound", `[...document.querySelectorAll('a[href^="#/policies/"]')].some(a => a.innerText === 'ui-batches')`)
	p.run("watch the update", evalStep(`window.updates = [];
	  new MutationObserver(() => { const dd = [...document.querySelectorAll('dt')].find(d => d.innerText === 'Update'); if (dd) window.updates.push(dd.nextElementSibling.innerText); })
	    .observe(document.querySelector('main'), {childList: true, subtree: true}); true`))
	p.run("roll the update", chromedp.SetValue(chromedp.CSS(`form[aria-label="Roll update"] select`), profileID(a, "ui-web-v2")),
		chromedp.Click(chromedp.CSS(`form[aria-label="Roll update"] button`)))
	// The update shown now, not one seen before: a stop must find it
	// before its last batch.
	p.waitFor(60*time.Second, "a batch in progress shown", `(() => { const d = [...document.querySelectorAll('dt')].find(d => d.innerText === 'Update');
	  return !!d && /batch [12] of 3/.test(d.nextElementSibling.innerText) && !/^(completed|stopped)/.test(d.nextElementSibling.innerText); })()`)
	p.screenshot("cluster-update")
	// Stop it from the console (the update's action is cancelled), then
	// continue it: the rest of its batches run.
	p.run("stop the update", chromedp.Click(chromedp.CSS(`button[data-op="stop-update"]`)))
	p.waitFor(60*time.Second, "the update stopped", `window.updates.some(s => s.startsWith('stopped'))`)
	p.run("continue the update", chromedp.Click(chromedp.CSS(`button[data-op="continue-update"]`)))
	p.waitFor(20*time.Second, "the continued update's action linked", `(document.getElementById('flash')||{innerText:''}).innerText.includes('Continue update: accepted.')`)
	p.waitFor(60*time.Second, "the update completed", `window.updates.some(s => s.startsWith('completed'))`)
	for _, n := range a.nodes("ui-web") {
		if n.ProfileName != "ui-web-v2" || n.Status != "ACTIVE" {
			t.Errorf("after the update, node %s is %s on profile %s; want ACTIVE on ui-web-v2", n.Name, n.Status, n.ProfileName)
		}
	}

	// A node's page.
	p.run("open a node", chromedp.Click(chromedp.CSS(`a[href^="#/nodes/"]`)))
	p.waitFor(20*time.Second, "the node page", `document.querySelector('h1').innerText.startsWith('Node ')`)
	p.screenshot("node")

	// A failed action and its reason.
	a.do("POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "ui-broken",
		"spec": map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{"/nonexistent/grove-ui-test"}}}}}, nil)
	a.do("POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": "ui-broken", "profile_id": "ui-broken", "desired_capacity": 1}}, nil)
	p.run("open the actions", chromedp.Navigate(a.addr+"/ui/#/actions?status=FAILED&action=CLUSTER_CREATE"))
	p.waitFor(30*time.Second, "the failed create listed", `document.querySelector('h1').innerText === 'Actions' && [...document.querySelectorAll('tbody tr')].some(r => r.innerText.includes('FAILED'))`)
	p.run("open the failed action", chromedp.Click(chromedp.CSS(`tbody th a`)))
	p.waitFor(20*time.Second, "its reason", `document.querySelector('h1').innerText.startsWith('Action ') && document.querySelector('dl').innerText.includes('no such file or directory')`)
	if r := p.text("dl"); !strings.Contains(r, "FAILED") || !strings.Contains(r, "/nonexistent/grove-ui-test") {
		t.Fatalf("the failed action's page does not give its status and reason:\n%s", r)
	}
	p.screenshot("action-failed")

	for _, shot := range []struct{ hash, ready, name string }{
		{"#/actions", `document.querySelector('h1').innerText === 'Actions' && document.querySelectorAll('tbody tr').length > 0`, "actions"},
		{"#/events", `document.querySelector('h1').innerText === 'Events' && document.querySelectorAll('tbody tr').length > 0`, "events"},
		{"#/hosts", `document.querySelector('h1').innerText === 'Hosts' && /up/.test(document.querySelector('tbody tr').innerText)`, "hosts"},
		{"#/profiles", `document.querySelector('h1').innerText === 'Profiles' && document.querySelectorAll('tbody tr').length >= 3`, "profiles"},
		{"#/types/profile/local.process-1.0", `document.querySelector('h1').innerText.startsWith('Profile type') && document.querySelector('tbody').innerText.includes('command')`, "profile-type"},
	} {
		p.run("open "+shot.hash, chromedp.Navigate(a.addr+"/ui/"+shot.hash))
		p.waitFor(20*time.Second, shot.name+" page", shot.ready)
		p.screenshot(shot.name)
	}

	// A profile's env is sensitive: its page shows it redacted.
	p.run("open the v2 profile", chromedp.Navigate(a.addr+"/ui/#/profiles/"+profileID(a, "ui-web-v2")))
	p.waitFor(20*time.Second, "the profile's spec", `document.querySelector('h1').innerText === 'Profile ui-web-v2' && !!document.querySelector('pre')`)
	if spec := p.text("pre"); strings.Contains(spec, `"v2"`) || !strings.Contains(spec, "GREETING") {
		t.Fatalf("the profile page shows a sensitive value, or not its key:\n%s", spec)
	}
	p.screenshot("profile")

	// Phone width: the cluster page still fits.
	p.run("phone width", chromedp.EmulateViewport(375, 800), chromedp.Navigate(a.addr+"/ui/#/clusters/ui-web"))
	p.waitFor(20*time.Second, "the cluster at 375px", `document.querySelector('h1').innerText === 'Cluster ui-web' && `+activeNodes(5))
	if overflow, err := eval[bool](p, `document.documentElement.scrollWidth > 375`); err != nil || overflow {
		t.Fatalf("the page is wider than a 375px screen (err %v)", err)
	}
	p.screenshot("cluster-phone")

	// Delete through the confirmation dialog: Cancel keeps the cluster,
	// Delete deletes it. (Reopening the dialog right after Cancel is what
	// once lost the delete: see TestConsoleConfirmDelete.)
	p.run("open delete", chromedp.EmulateViewport(1280, 900), chromedp.Click(chromedp.CSS(`main button[data-op="delete-cluster"]`)))
	p.waitFor(10*time.Second, "the dialog", `document.getElementById('confirm').open`)
	p.run("cancel", chromedp.Click(chromedp.CSS(`#confirm button[value="cancel"]`)))
	p.waitFor(10*time.Second, "the dialog closed", `!document.getElementById('confirm').open`)
	if code := a.do("GET", "/v1/clusters/ui-web", nil, nil); code != 200 {
		t.Fatalf("the cluster after Cancel: GET answered %d, want 200", code)
	}
	p.run("delete", chromedp.Click(chromedp.CSS(`main button[data-op="delete-cluster"]`)))
	p.waitFor(10*time.Second, "the dialog again", `document.getElementById('confirm').open`)
	p.run("confirm", chromedp.Click(chromedp.CSS(`#confirm-ok`)))
	deleted := p.flashAction("Delete cluster ui-web: accepted.")
	if kind := actionOf(a, deleted).Action; kind != "CLUSTER_DELETE" {
		t.Fatalf("the delete's flash links action %s, a %s; want a CLUSTER_DELETE", deleted, kind)
	}
	p.waitFor(60*time.Second, "the cluster's page saying it is gone", `/not found|could not be found/i.test(document.querySelector('main').innerText)`)
	p.run("open the list", chromedp.Navigate(a.addr+"/ui/#/clusters"))
	p.waitFor(20*time.Second, "the list without the cluster", `document.querySelector('h1').innerText === 'Clusters' && [...document.querySelectorAll('tbody th a')].some(a => a.innerText === 'ui-broken') && ![...document.querySelectorAll('tbody th a')].some(a => a.innerText === 'ui-web')`)
}

func profileID(a *agent, name string) string {
	var out struct {
		Profile struct{ ID string } `json:"profile"`
	}
	a.do("GET", "/v1/profiles/"+name, nil, &out)
	return out.Profile.ID
}

func policyID(a *agent, name string) string {
	var out struct {
		Policy struct{ ID string } `json:"policy"`
	}
	a.do("GET", "/v1/policies/"+name, nil, &out)
	return out.Policy.ID
}

// killNodes kills what is left of a cluster's node processes at the end of
// a test (node processes outlive their agent): the pids its nodes record
// and their local.process supervisor (or wrappers), found while the agent
// runs, killed once it has stopped, so no health check restarts them. A
// supervisor is killed only when its argv names a directory under this
// agent's data dir.
func killNodes(a *agent, cluster string) {
	var pids []int
	for _, n := range a.nodesQuiet(cluster) {
		pid, ok := n.Data["pid"].(float64)
		if !ok || pid <= 1 {
			continue
		}
		pids = append(pids, int(pid))
		if w := proctest.PPID(int(pid)); w > 1 {
			// The node's parent: its supervisor (or, before it, its
			// wrapper), whose argv names a directory in this agent's data
			// dir.
			if strings.HasPrefix(proctest.HelperDir(proctest.Cmdline(w)), a.dataDir+string(filepath.Separator)) {
				pids = append(pids, w)
			}
		}
	}
	a.stop()
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// nodesQuiet lists a cluster's nodes, none when it is gone.
func (a *agent) nodesQuiet(cluster string) []node {
	resp, err := http.Get(a.addr + "/v1/nodes?cluster_id=" + cluster)
	if err != nil {
		return nil
	}
	defer resp.Body.Close()
	var out struct {
		Nodes []node `json:"nodes"`
	}
	_ = json.NewDecoder(resp.Body).Decode(&out)
	return out.Nodes
}

// evalStep runs JavaScript as a step, for what it does, not its value.
func evalStep(expr string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Evaluate[bool](expr)(ctx, t)
		return chromedp.Void{}, err
	}
}
