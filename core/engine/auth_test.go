package engine_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

func status(err error) int {
	if err == nil {
		return 0
	}
	s, _ := engine.HTTPStatus(err)
	return s
}

// TestHostAccessNeedsAGrant: local.process profiles and container profiles
// with host volumes are refused (403, naming the type and the command that
// grants it) in a project no admin granted the type, when created or
// validated; granted, they are accepted; taking the grant back refuses new
// clusters and nodes of an existing profile.
func TestHostAccessNeedsAGrant(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.ctx()
	other := engine.Caller{User: "tok", Project: "other", Role: model.RoleMember}
	proc := map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{"command": []any{"sleep", "60"}}}
	docker := func(volumes ...any) map[string]any {
		props := map[string]any{"image": "busybox"}
		if len(volumes) > 0 {
			props["volumes"] = volumes
		}
		return map[string]any{"type": "container.docker", "version": "1.0", "properties": props}
	}

	_, err := h.eng.CreateProfile(ctx, other, "proc", proc, nil)
	if status(err) != http.StatusForbidden || !strings.Contains(err.Error(), "grove project allow other local.process") {
		t.Fatalf("local.process in an ungranted project: %v; want 403 naming `grove project allow other local.process`", err)
	}
	if _, err := h.eng.ValidateProfile(ctx, other, proc); status(err) != http.StatusForbidden {
		t.Errorf("validating local.process in an ungranted project: %v; want 403", err)
	}
	if _, err := h.eng.CreateProfile(ctx, other, "vols", docker("/etc:/host-etc:ro"), nil); status(err) != http.StatusForbidden ||
		!strings.Contains(err.Error(), "container.docker") {
		t.Errorf("a container with host volumes in an ungranted project: %v; want 403 naming container.docker", err)
	}
	if _, err := h.eng.CreateProfile(ctx, other, "novols", docker(), nil); err != nil {
		t.Errorf("a container without host volumes needs no grant: %v", err)
	}

	if err := h.eng.Grant(ctx, "other", "local.process"); err != nil {
		t.Fatal(err)
	}
	if err := h.eng.Grant(ctx, "other", "grove.noop"); status(err) != http.StatusBadRequest {
		t.Errorf("granting a type that is not host access: %v; want 400", err)
	}
	if _, err := h.eng.CreateProfile(ctx, other, "proc", proc, nil); err != nil {
		t.Fatalf("local.process after the grant: %v", err)
	}
	if _, err := h.eng.CreateProfile(ctx, other, "vols", docker("/etc:/host-etc:ro"), nil); status(err) != http.StatusForbidden {
		t.Errorf("a grant of local.process granted container.docker: %v", err)
	}
	if err := h.eng.Ungrant(ctx, "other", "local.process"); err != nil {
		t.Fatal(err)
	}
	zero := 0
	if _, _, err := h.eng.CreateCluster(ctx, other, engine.ClusterCreate{Name: "c", Profile: "proc", DesiredCapacity: &zero}); status(err) != http.StatusForbidden {
		t.Errorf("a cluster of a local.process profile after the grant was taken back: %v; want 403", err)
	}
	if _, _, err := h.eng.CreateNode(ctx, other, engine.NodeCreate{Name: "n", Profile: "proc"}); status(err) != http.StatusForbidden {
		t.Errorf("a node of a local.process profile after the grant was taken back: %v; want 403", err)
	}
	if g, err := h.eng.Grants(ctx, "other"); err != nil || len(g) != 0 {
		t.Errorf("grants after the revocation: %v %v", g, err)
	}

	// Dev mode: project "default" holds every grant; other projects none.
	dev := h.newEngine("dev", func(c *engine.Config) { c.Dev = true })
	def := engine.Caller{User: "dev", Project: model.DefaultProject, Role: model.RoleAdmin}
	if _, err := dev.CreateProfile(ctx, def, "proc", proc, nil); err != nil {
		t.Errorf("local.process in dev mode's default project: %v", err)
	}
	if _, err := dev.CreateProfile(ctx, other, "proc2", proc, nil); status(err) != http.StatusForbidden {
		t.Errorf("dev mode granted a project other than default: %v", err)
	}
	if _, err := h.eng.CreateProfile(ctx, def, "proc", proc, nil); status(err) != http.StatusForbidden {
		t.Errorf("outside dev mode, default holds no grant it was not given: %v", err)
	}
}

// TestTokens: a token's secret has its documented shape, authenticates as
// its project and role, stops authenticating when it expires or is
// revoked, and only its hash is stored.
func TestTokens(t *testing.T) {
	h := newHarness(t, nil)
	ctx := h.ctx()
	tok, secret, err := h.eng.CreateToken(ctx, engine.Caller{User: "creator"}, engine.TokenCreate{Name: "ci", Project: "p", Role: model.RoleMember, TTL: "1h"})
	if err != nil {
		t.Fatal(err)
	}
	if !engine.WellFormedToken(secret) || len(secret) != len("grove_")+43 {
		t.Errorf("secret %q is not grove_ and 43 base64url characters", secret)
	}
	stored, err := h.store.GetToken(ctx, tok.ID)
	if err != nil || stored.Hash != engine.HashToken(secret) || strings.Contains(stored.Hash, secret[6:]) || stored.CreatedBy != "creator" {
		t.Errorf("stored token: %+v %v", stored, err)
	}
	c, err := h.eng.Authenticate(ctx, secret)
	if err != nil || c.User != tok.ID || c.Project != "p" || c.Role != model.RoleMember {
		t.Errorf("authenticate: %+v %v", c, err)
	}
	for _, bad := range []string{"", "grove_", secret[:len(secret)-1], secret + "A", strings.ToUpper(secret), tok.ID, stored.Hash} {
		if _, err := h.eng.Authenticate(ctx, bad); status(err) != http.StatusUnauthorized {
			t.Errorf("authenticate %q: %v; want 401", bad, err)
		}
	}
	for _, req := range []engine.TokenCreate{
		{Name: "x", Project: "p", Role: "root"},
		{Name: "x", Project: "", Role: "reader"},
		{Name: "x", Project: "p", Role: "reader", TTL: "-1h"},
		{Name: "x", Project: "p", Role: "reader", TTL: "soon"},
	} {
		if _, _, err := h.eng.CreateToken(ctx, engine.Caller{}, req); status(err) != http.StatusBadRequest {
			t.Errorf("create %+v: %v; want 400", req, err)
		}
	}
	h.clock.advance(time.Hour)
	if _, err := h.eng.Authenticate(ctx, secret); status(err) != http.StatusUnauthorized || !strings.Contains(err.Error(), "expired") {
		t.Errorf("an expired token: %v; want 401 saying it expired", err)
	}
	_, forever, err := h.eng.CreateToken(ctx, engine.Caller{}, engine.TokenCreate{Name: "ops", Project: "p", Role: model.RoleAdmin})
	if err != nil {
		t.Fatal(err)
	}
	c, _ = h.eng.Authenticate(ctx, forever)
	if err := h.eng.RevokeToken(ctx, c.User); err != nil {
		t.Fatal(err)
	}
	if _, err := h.eng.Authenticate(ctx, forever); status(err) != http.StatusUnauthorized {
		t.Errorf("a revoked token: %v; want 401", err)
	}
	if err := h.eng.RevokeToken(ctx, c.User); status(err) != http.StatusNotFound {
		t.Errorf("revoking twice: %v; want 404", err)
	}
	var e *engine.Error
	if _, err := h.eng.Authenticate(ctx, "grove_nope"); !errors.As(err, &e) || strings.Contains(e.Message, "grove_nope") {
		t.Errorf("a 401 repeats the token it was sent: %v", err)
	}
}
