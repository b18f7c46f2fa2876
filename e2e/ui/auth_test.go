package ui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// TestConsoleToken: an agent that requires tokens (not -dev, ui = true in
// its config) gets the console's token form; a wrong token is refused and
// the form stays; the right one is kept in the tab's session storage only
// and shows the token's project, and no other; forgetting it, or a token
// the agent no longer accepts, brings the form back.
func TestConsoleToken(t *testing.T) {
	ctx := browser(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	if err := os.WriteFile(cfg, []byte("bind     = \"127.0.0.1:0\"\ndata_dir = \""+dir+"\"\nui       = true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	a := startAgent(t, dir, "-config", cfg)
	b, err := os.ReadFile(filepath.Join(dir, "bootstrap-token"))
	if err != nil {
		t.Fatalf("the agent wrote no bootstrap token: %v", err)
	}
	a.token = strings.TrimSpace(string(b))
	// A member of project team-a, and a profile of project default that
	// it must not see.
	var tok struct {
		Token struct{ Secret string } `json:"token"`
	}
	a.do("POST", "/v1/tokens", map[string]any{"token": map[string]any{"name": "ui", "project": "team-a", "role": "member"}}, &tok)
	a.do("POST", "/v1/profiles", map[string]any{"profile": map[string]any{"name": "default-only",
		"spec": map[string]any{"type": "grove.noop", "version": "1.0", "properties": map[string]any{}}}}, nil)
	p := newPage(t, ctx)

	p.run("open the console", chromedp.Navigate(a.addr+"/ui/#/profiles"))
	p.waitFor(20*time.Second, "the token form", `!!document.querySelector('input#token') && document.querySelector('h1').innerText === 'Sign in'`)
	p.screenshot("sign-in")

	signIn := func(secret string) {
		p.run("sign in", chromedp.SetValue(chromedp.CSS(`input#token`), secret), chromedp.Click(chromedp.CSS(`form button[type=submit]`)))
	}
	signIn("not-a-token")
	p.waitFor(20*time.Second, "the form again, with the agent's reason", `!!document.querySelector('input#token') && /not valid/.test(document.querySelector('[role=alert]').innerText)`)

	signIn(tok.Token.Secret)
	p.waitFor(20*time.Second, "the profiles page", `document.querySelector('h1').innerText === 'Profiles'`)
	if body := p.text("main"); strings.Contains(body, "default-only") {
		t.Fatalf("a team-a token sees project default's profile:\n%s", body)
	}
	p.waitFor(20*time.Second, "live updates with the token", `document.getElementById('live').dataset.state === 'live'`)
	stored, err := eval[string](p, `JSON.stringify([sessionStorage.getItem('grove.token'), localStorage.length, document.cookie])`)
	if err != nil {
		t.Fatal(err)
	}
	if want := `["` + tok.Token.Secret + `",0,""]`; stored != want {
		t.Fatalf("the token is kept as %s; want it in session storage only: %s", stored, want)
	}

	// The admin's token sees project default's profile.
	p.run("forget the token", chromedp.Click(chromedp.CSS(`#logout`)))
	p.waitFor(20*time.Second, "the form after forgetting", `!!document.querySelector('input#token') && sessionStorage.getItem('grove.token') === null`)
	signIn(a.token)
	p.waitFor(20*time.Second, "project default's profile", `document.querySelector('main').innerText.includes('default-only')`)

	// A token revoked while the page is open: the next call's 401 brings
	// the form back.
	p.run("a stale token", evalStep(`sessionStorage.setItem('grove.token', 'revoked'); location.hash = '#/clusters'; true`))
	p.waitFor(20*time.Second, "the form after a 401", `!!document.querySelector('input#token')`)
}
