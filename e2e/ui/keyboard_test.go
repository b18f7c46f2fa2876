package ui

import (
	"encoding/json"
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
// the new page's heading, starts the dialog on Cancel, comes back to the
// button that opened it and stays there through a live refresh; the
// cluster is not deleted.
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

	// A live refresh rebuilds the page; the focus stays on the same
	// button (its twin), not back at the top of the document.
	p.run("remember the button", evalStep(`window.opener = document.activeElement; true`))
	a.do("POST", "/v1/clusters/kb/actions", map[string]any{"check": map[string]any{}}, nil)
	p.waitFor(30*time.Second, "the page rebuilt by a live refresh", `!window.opener.isConnected`)
	p.mustHold("the focus on the rebuilt delete button", deleteButton)

	// The cluster is still there (a GET of a deleted one fails the test)
	// and, its check done, ACTIVE.
	eventually(t, 30*time.Second, "cluster kb ACTIVE after its check", func() (bool, string) {
		var out struct {
			Cluster struct {
				Status string `json:"status"`
			} `json:"cluster"`
		}
		a.do("GET", "/v1/clusters/kb", nil, &out)
		return out.Cluster.Status == "ACTIVE", out.Cluster.Status
	})
}

// TestConsoleFocusWhenARefreshRacesANavigation: a live refresh that starts
// while a followed link's page is still loading replaces that render; the
// new page's heading gets the focus all the same. Before, the refresh kept
// the focus of the page being left (the link, gone from the new page), so
// the focus fell back to the top of the document.
func TestConsoleFocusWhenARefreshRacesANavigation(t *testing.T) {
	ctx := browser(t)
	a := startAgent(t, t.TempDir(), "-dev", "-bind", "127.0.0.1:0")
	noopCluster(t, a, "race", 1)
	p := newPage(t, ctx)

	p.run("install the fetch gate", holdFetches(""))
	p.run("open the console", chromedp.Navigate(a.addr+"/ui/#/clusters"))
	p.waitFor(20*time.Second, "the cluster listed, live updates on", `[...document.querySelectorAll('tbody th a')].some(a => a.innerText === 'race') && document.getElementById('live').dataset.state === 'live'`)
	p.tabTo("the cluster's link", `document.activeElement.matches('tbody th a') && document.activeElement.innerText === 'race'`, 30)

	// Hold the reads of one cluster: the link's render waits on its first
	// read, and so does the live refresh that an event starts meanwhile
	// (still under the list's rule that every event concerns it).
	p.run("hold the cluster's reads", evalStep(`window.holdPattern = '/v1/clusters/[^/?]+$'; true`))
	p.press("follow the link", kb.Enter)
	p.waitFor(10*time.Second, "the page's read held", `window.held === 1`)
	a.do("POST", "/v1/clusters/race/actions", map[string]any{"check": map[string]any{}}, nil)
	p.waitFor(20*time.Second, "a live refresh's read held too", `window.held === 2`)
	p.run("release the reads", evalStep(`window.releaseHeld()`))
	p.waitFor(20*time.Second, "the cluster's page, its heading focused", `document.activeElement.tagName === 'H1' && document.activeElement.innerText === 'Cluster race'`)
}

// nodeNames is a JavaScript expression: the names in the nodes table.
const nodeNames = `[...document.querySelectorAll('table')].filter(t => / nodes$/.test((t.querySelector('caption')||{}).innerText||''))
  .flatMap(t => [...t.tBodies[0].rows].map(r => r.cells[0].innerText))`

// TestConsolePaging: a cluster of more nodes than a page shows them 50 at a
// time; Next pages on to the last ones, Previous and First go back, 100
// per page shows more, and a live refresh keeps the page being shown. The
// profiles list pages the same way.
func TestConsolePaging(t *testing.T) {
	ctx := browser(t)
	a := startAgent(t, t.TempDir(), "-dev", "-bind", "127.0.0.1:0")
	noopCluster(t, a, "many", 120)
	var all struct {
		Nodes []node `json:"nodes"`
	}
	a.do("GET", "/v1/nodes?sort=index&limit=1000&cluster_id=many", nil, &all)
	if len(all.Nodes) != 120 {
		t.Fatalf("the API lists %d nodes of cluster many; want 120", len(all.Nodes))
	}
	names := func(from, to int) string {
		var s []string
		for _, n := range all.Nodes[from:to] {
			s = append(s, n.Name)
		}
		b, _ := json.Marshal(s)
		return string(b)
	}
	shows := func(from, to int) string {
		return fmt.Sprintf(`JSON.stringify(%s) === %q && document.querySelector('.pager').innerText.includes('Page ')`, nodeNames, names(from, to))
	}
	p := newPage(t, ctx)

	p.run("open the cluster", chromedp.Navigate(a.addr+"/ui/#/clusters/many"))
	p.waitFor(30*time.Second, "the first 50 nodes", shows(0, 50))
	p.mustHold("the caption's count", `[...document.querySelectorAll('caption')].some(c => c.innerText === '1–50 of 120 nodes')`)
	p.mustHold("no Previous on the first page", `!document.querySelector('a[data-page="previous"]')`)
	p.run("next page", chromedp.Click(chromedp.CSS(`a[data-page="next"]`)))
	p.waitFor(30*time.Second, "nodes 51 to 100", shows(50, 100)+` && document.querySelector('.pager').innerText.includes('Page 2')`)
	p.run("next page again", chromedp.Click(chromedp.CSS(`a[data-page="next"]`)))
	p.waitFor(30*time.Second, "the last 20 nodes", shows(100, 120)+` && document.querySelector('.pager').innerText.includes('Page 3')`)
	p.mustHold("no Next on the last page", `!document.querySelector('a[data-page="next"]')`)
	p.mustHold("the caption's count", `[...document.querySelectorAll('caption')].some(c => c.innerText === '101–120 of 120 nodes')`)
	p.screenshot("cluster-nodes-last-page")

	// The page being shown follows the cluster live: grown to 125, its
	// last page gets the new nodes, without leaving it.
	p.run("mark the page", evalStep(`window.marker = 'same page'; true`))
	a.do("POST", "/v1/clusters/many/actions", map[string]any{"resize": map[string]any{"adjustment_type": "EXACT_CAPACITY", "number": 125}}, nil)
	p.waitFor(60*time.Second, "the last page grown to 25 nodes", nodeNames+`.length === 25 && document.querySelector('.pager').innerText.includes('Page 3')`)
	if same, _ := eval[string](p, `window.marker || ''`); same != "same page" {
		t.Fatal("the page reloaded; live updates should change it in place")
	}

	p.run("previous page", chromedp.Click(chromedp.CSS(`a[data-page="previous"]`)))
	p.waitFor(30*time.Second, "back to nodes 51 to 100", shows(50, 100)+` && document.querySelector('.pager').innerText.includes('Page 2')`)
	p.run("previous page again", chromedp.Click(chromedp.CSS(`a[data-page="previous"]`)))
	p.waitFor(30*time.Second, "back to the first 50", shows(0, 50)+` && document.querySelector('.pager').innerText.includes('Page 1')`)
	p.run("100 per page", chromedp.Click(chromedp.CSS(`.pager .sizes a`)))
	p.waitFor(30*time.Second, "the first 100 nodes", shows(0, 100)+` && location.hash.includes('limit=100')`)
	p.run("next 100", chromedp.Click(chromedp.CSS(`a[data-page="next"]`)))
	p.waitFor(30*time.Second, "the last 25 nodes", nodeNames+`.length === 25 && document.querySelector('.pager').innerText.includes('Page 2')`)
	p.run("first page", chromedp.Click(chromedp.CSS(`a[data-page="first"]`)))
	p.waitFor(30*time.Second, "the first 100 again", shows(0, 100))

	// The cluster's create action has 120 children: 50 a page, the last 20
	// on the third.
	var acts struct {
		Actions []struct {
			ID string `json:"id"`
		} `json:"actions"`
	}
	var cl struct {
		Cluster struct {
			ID string `json:"id"`
		} `json:"cluster"`
	}
	a.do("GET", "/v1/clusters/many", nil, &cl)
	a.do("GET", "/v1/actions?action=CLUSTER_CREATE&target="+cl.Cluster.ID, nil, &acts)
	if len(acts.Actions) != 1 {
		t.Fatalf("%d CLUSTER_CREATE actions of cluster many; want 1", len(acts.Actions))
	}
	kids := `[...document.querySelectorAll('table')].filter(t => /child actions/.test(t.querySelector('caption').innerText)).flatMap(t => [...t.tBodies[0].rows])`
	p.run("open the create action", chromedp.Navigate(a.addr+"/ui/#/actions/"+acts.Actions[0].ID))
	p.waitFor(30*time.Second, "its first 50 children", `document.querySelector('h1').innerText.startsWith('Action ') && `+kids+`.length === 50`)
	p.run("next children", chromedp.Click(chromedp.CSS(`a[data-page="next"]`)))
	p.waitFor(30*time.Second, "children 51 to 100", kids+`.length === 50 && document.querySelector('.pager').innerText.includes('Page 2')`)
	p.run("last children", chromedp.Click(chromedp.CSS(`a[data-page="next"]`)))
	p.waitFor(30*time.Second, "the last 20 children", kids+`.length === 20 && !document.querySelector('a[data-page="next"]')`)

	// Events: well over a page of them by now.
	evRows := `[...document.querySelectorAll('tbody tr')].map(r => r.innerText).join('\n')`
	p.run("open the events", chromedp.Navigate(a.addr+"/ui/#/events"))
	p.waitFor(30*time.Second, "a full page of events", `document.querySelector('h1').innerText === 'Events' && document.querySelectorAll('tbody tr').length === 50`)
	first, err := eval[string](p, evRows)
	if err != nil {
		t.Fatal(err)
	}
	p.run("next events", chromedp.Click(chromedp.CSS(`a[data-page="next"]`)))
	p.waitFor(30*time.Second, "the second page of events", `document.querySelector('.pager').innerText.includes('Page 2') && document.querySelectorAll('tbody tr').length > 0`)
	if second, _ := eval[string](p, evRows); second == first {
		t.Fatal("the second page of events shows the first page's")
	}

	// Lists page the same way: 55 profiles (and the cluster's) are two pages.
	for i := 0; i < 55; i++ {
		a.do("POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": fmt.Sprintf("p%02d", i),
			"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{}}}}, nil)
	}
	rows := `[...document.querySelectorAll('tbody th')].map(c => c.innerText)`
	p.run("open the profiles", chromedp.Navigate(a.addr+"/ui/#/profiles"))
	p.waitFor(30*time.Second, "the first 50 profiles", `document.querySelector('h1').innerText === 'Profiles' && `+rows+`.length === 50 && `+rows+`[0] === 'many'`)
	p.run("next profiles", chromedp.Click(chromedp.CSS(`a[data-page="next"]`)))
	p.waitFor(30*time.Second, "the last 6 profiles", `JSON.stringify(`+rows+`) === '["p49","p50","p51","p52","p53","p54"]'`)
}
