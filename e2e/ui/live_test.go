package ui

import (
	"context"
	"fmt"
	"time"

	"testing"

	"github.com/chromedp/chromedp"
)

// holdFetches makes every page the tab opens hold the requests whose URL
// matches the regular expression window.holdPattern (initially pattern;
// empty holds nothing) until window.releaseHeld() is called, which also
// stops holding; window.held counts the requests held. A test sets
// window.holdPattern later to hold from that moment on.
func holdFetches(pattern string) chromedp.Action[chromedp.Void] {
	script := fmt.Sprintf(`(() => {
  const real = window.fetch.bind(window);
  let release;
  const gate = new Promise((r) => { release = r; });
  window.holdPattern = %q;
  window.held = 0;
  window.releaseHeld = () => { window.holdPattern = ''; release(); return true; };
  window.fetch = (input, init) => {
    const url = typeof input === 'string' ? input : input.url;
    if (window.holdPattern && new RegExp(window.holdPattern).test(url)) {
      window.held++;
      return gate.then(() => real(input, init));
    }
    return real(input, init);
  };
})();`, pattern)
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		return chromedp.Void{}, t.Call(ctx, "Page.addScriptToEvaluateOnNewDocument", map[string]any{"source": script}, nil)
	}
}

// TestConsoleCatchesUpWhenLive: the event stream sends only what is
// written after it connected, so what changes between the page's first
// read and the stream's start (here a whole cluster create, while the
// stream's request is held) shows once the stream is live, without a
// reload. Without it, a create that ended in that window left the list
// showing the cluster CREATING for good.
func TestConsoleCatchesUpWhenLive(t *testing.T) {
	ctx := browser(t)
	a := startAgent(t, t.TempDir(), "-dev", "-bind", "127.0.0.1:0")
	p := newPage(t, ctx)

	p.run("hold the event stream", holdFetches(`/v1/events\?follow=true`))
	p.run("open the console", chromedp.Navigate(a.addr+"/ui/"))
	p.waitFor(20*time.Second, "the empty list, its stream held", `document.querySelector('h1').innerText === 'Clusters' && window.held === 1`)
	p.run("mark the page", evalStep(`window.marker = 'same page'; true`))

	noopCluster(t, a, "made-while-connecting", 2)
	if got, _ := eval[bool](p, `document.querySelector('main').innerText.includes('made-while-connecting')`); got {
		t.Fatal("the list showed the cluster before its stream connected: nothing here tests the catch-up")
	}

	p.run("release the stream", evalStep(`window.releaseHeld()`))
	p.waitFor(20*time.Second, "live updates on", `document.getElementById('live').dataset.state === 'live'`)
	p.waitFor(20*time.Second, "the cluster made while the stream connected, ACTIVE", `[...document.querySelectorAll('tbody tr')].some(r => r.innerText.includes('made-while-connecting') && r.innerText.includes('ACTIVE') && r.innerText.includes('2 / 2'))`)
	if same, _ := eval[string](p, `window.marker || ''`); same != "same page" {
		t.Fatal("the page reloaded; the live refresh should change it in place")
	}
}

// mouse sends one mouse event of type (mousePressed, mouseReleased) with
// the left button at the centre of the element window[name].
func mouse(name, typ string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		at, err := chromedp.Evaluate[[]float64](fmt.Sprintf(`(() => { const r = window[%q].getBoundingClientRect(); return [r.x + r.width / 2, r.y + r.height / 2]; })()`, name))(ctx, t)
		if err != nil {
			return chromedp.Void{}, err
		}
		return chromedp.Void{}, t.Call(ctx, "Input.dispatchMouseEvent", map[string]any{"type": typ, "x": at[0], "y": at[1], "button": "left", "buttons": 1, "clickCount": 1}, nil)
	}
}

// TestConsoleClickDuringARefresh: a live refresh whose data arrives while
// a button is pressed waits until it is released, so the click reaches the
// button pressed. Before, the refresh rebuilt the page between the press
// and the release, the release landed on the button's new twin, and the
// click was lost: Recover did nothing (TestConsoleCheckRecover in CI).
func TestConsoleClickDuringARefresh(t *testing.T) {
	ctx := browser(t)
	a := startAgent(t, t.TempDir(), "-dev", "-bind", "127.0.0.1:0")
	noopCluster(t, a, "pressed", 1)
	p := newPage(t, ctx)

	p.run("install the fetch gate", holdFetches(""))
	p.run("open the cluster", chromedp.Navigate(a.addr+"/ui/#/clusters/pressed"))
	p.waitFor(20*time.Second, "the cluster's page, live", `!!document.querySelector('h1') && document.querySelector('h1').innerText === 'Cluster pressed' && document.getElementById('live').dataset.state === 'live'`)
	// A check's events start a live refresh; its read of the cluster is
	// held until the button is down.
	p.run("hold the cluster's reads", evalStep(`window.holdPattern = '/v1/clusters/[^/?]+$'; true`))
	a.do("POST", "/v1/clusters/pressed/actions", map[string]any{"check": map[string]any{}}, nil)
	p.waitFor(20*time.Second, "a live refresh's read held", `window.held >= 1`)
	p.run("find Recover", evalStep(`window.pressedButton = document.querySelector('main button[data-op="recover"]'); !!window.pressedButton`))
	p.run("press Recover", mouse("pressedButton", "mousePressed"))
	p.run("release the reads", evalStep(`window.releaseHeld()`))
	p.waitFor(20*time.Second, "the refresh ready while the button is down", `document.getElementById('main').dataset.refresh === 'held' || !window.pressedButton.isConnected`)
	if ok, _ := eval[bool](p, `window.pressedButton.isConnected`); !ok {
		t.Fatal("the refresh rebuilt the page while the button was down")
	}
	p.run("release Recover", mouse("pressedButton", "mouseReleased"))
	id := p.flashAction("Recover: accepted.")
	if got := actionOf(a, id); got.Action != "CLUSTER_RECOVER" {
		t.Fatalf("the message links %+v; want a CLUSTER_RECOVER", got)
	}
	p.waitFor(20*time.Second, "the waiting refresh run once the button is up", `document.getElementById('main').dataset.refresh === undefined && !window.pressedButton.isConnected`)
}
