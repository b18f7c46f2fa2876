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
