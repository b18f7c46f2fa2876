package ui

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// noopCluster makes a grove.noop profile and a cluster of n nodes on it,
// and waits until the cluster is ACTIVE with n nodes.
func noopCluster(t *testing.T, a *agent, name string, n int) {
	t.Helper()
	a.do("POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": name,
		"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{}}}}, nil)
	a.do("POST", "/v1/clusters", map[string]any{"cluster": map[string]any{"name": name, "profile_id": name, "desired_capacity": n}}, nil)
	eventually(t, 120*time.Second, fmt.Sprintf("cluster %s ACTIVE with %d nodes", name, n), func() (bool, string) {
		var out struct {
			Cluster struct {
				Status string   `json:"status"`
				Nodes  []string `json:"nodes"`
			} `json:"cluster"`
		}
		a.do("GET", "/v1/clusters/"+name, nil, &out)
		return out.Cluster.Status == "ACTIVE" && len(out.Cluster.Nodes) == n, fmt.Sprintf("%s with %d nodes", out.Cluster.Status, len(out.Cluster.Nodes))
	})
}

// focused is a JavaScript expression describing the focused element, for
// failure messages.
const focused = `(() => { const a = document.activeElement; return a ? a.tagName + ' ' + (a.dataset.op || a.getAttribute('href') || a.name || '') + ' ' + JSON.stringify(a.innerText || a.value || '').slice(0, 60) : 'none'; })()`

// press sends keys and returns what has focus after.
func (p *page) press(what, keys string) string {
	p.t.Helper()
	p.run(what, chromedp.KeyEvent(keys))
	s, err := eval[string](p, focused)
	if err != nil {
		p.t.Fatal(err)
	}
	return s
}

// tabTo presses Tab until expr (about document.activeElement) holds, at
// most max times, and fails with the focus's path if it never does.
func (p *page) tabTo(what, expr string, max int) {
	p.t.Helper()
	var path []string
	for i := 0; i < max; i++ {
		path = append(path, p.press("tab towards "+what, kb.Tab))
		if ok, err := eval[bool](p, expr); err == nil && ok {
			return
		}
	}
	p.t.Fatalf("%d Tabs did not reach %s; focus went:\n%s", max, what, strings.Join(path, "\n"))
}

// mustHold fails unless expr is true now.
func (p *page) mustHold(what, expr string) {
	p.t.Helper()
	ok, err := eval[bool](p, expr)
	if err != nil || !ok {
		f, _ := eval[string](p, focused)
		p.t.Fatalf("%s does not hold (err %v); focus is on %s", what, err, f)
	}
}

// TestConsoleKeyboard: with the keyboard only, an operator goes from the
// clusters list to a cluster's page, opens its delete dialog and cancels
// it, twice (Escape, then Enter on Cancel). Focus is visible, lands on
// the new page's heading, starts the dialog on Cancel and comes back to
// the button that opened it; the cluster is not deleted.
func TestConsoleKeyboard(t *testing.T) {
	ctx := browser(t)
	a := startAgent(t, t.TempDir(), "-dev", "-bind", "127.0.0.1:0")
	noopCluster(t, a, "kb", 2)
	p := newPage(t, ctx)

	p.run("open the console", chromedp.Navigate(a.addr+"/ui/#/clusters"))
	p.waitFor(20*time.Second, "the cluster listed", `[...document.querySelectorAll('tbody th a')].some(a => a.innerText === 'kb')`)
	p.waitFor(20*time.Second, "the list's heading focused", `document.activeElement === document.querySelector('main h1')`)

	p.tabTo("the cluster's link", `document.activeElement.matches('tbody th a') && document.activeElement.innerText === 'kb'`, 30)
	p.mustHold("a visible focus ring on the link", `getComputedStyle(document.activeElement).outlineStyle !== 'none' && parseFloat(getComputedStyle(document.activeElement).outlineWidth) >= 2`)

	p.press("follow the link", kb.Enter)
	p.waitFor(20*time.Second, "the cluster's page, its heading focused", `location.hash.startsWith('#/clusters/') && document.activeElement.tagName === 'H1' && document.activeElement.innerText === 'Cluster kb'`)

	deleteButton := `document.activeElement.matches('main button[data-op="delete-cluster"]')`
	p.tabTo("the delete button", deleteButton, 60)
	p.mustHold("a visible focus ring on the delete button", `getComputedStyle(document.activeElement).outlineStyle !== 'none'`)

	p.press("open the dialog", kb.Enter)
	p.waitFor(10*time.Second, "the dialog open, Cancel focused", `document.getElementById('confirm').open && document.activeElement.matches('#confirm button[value="cancel"]')`)
	p.screenshot("keyboard-dialog")
	p.press("dismiss the dialog", kb.Escape)
	p.waitFor(10*time.Second, "the dialog closed, focus back on its opener", `!document.getElementById('confirm').open && `+deleteButton)

	p.press("open the dialog again", kb.Enter)
	p.waitFor(10*time.Second, "the dialog open again, Cancel focused", `document.getElementById('confirm').open && document.activeElement.matches('#confirm button[value="cancel"]')`)
	p.press("choose Cancel", kb.Enter)
	p.waitFor(10*time.Second, "the dialog closed, focus back on its opener", `!document.getElementById('confirm').open && `+deleteButton)

	var out struct {
		Cluster struct {
			Status string `json:"status"`
		} `json:"cluster"`
	}
	a.do("GET", "/v1/clusters/kb", nil, &out)
	if out.Cluster.Status != "ACTIVE" {
		t.Fatalf("after two cancelled deletes the cluster is %q; want ACTIVE", out.Cluster.Status)
	}
}
