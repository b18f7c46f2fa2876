package engine_test

import (
	"testing"

	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// TestPolicySeesTheProfile: a policy gets the cluster's profile, its
// sensitive values open when the policy's plugin also serves the profile's
// type (it holds them anyway) and "(sensitive)" for a policy of another
// plugin. A refusal's data stays in the failed action's data.
func TestPolicySeesTheProfile(t *testing.T) {
	h := newHarness(t, nil)
	h.profileOf("p", "test.gate", map[string]any{"label": "x", "secret": "s3cret"})
	h.profileOf("proc", "local.process", map[string]any{"command": []any{"true"}, "env": map[string]any{"TOKEN": "s3cret"}})
	h.policy("seen", "test.seen", "1.0", `{}`)

	same := h.cluster("same", 0, 60)
	h.attach(same, "seen")
	b, err := h.store.GetBinding(h.ctx(), same.ID, policyID(h, "seen"))
	if err != nil {
		t.Fatal(err)
	}
	props, _ := b.Data["properties"].(map[string]any)
	if b.Data["type"] != "test.gate" || props["secret"] != "s3cret" || props["label"] != "x" {
		t.Errorf("a policy of the profile type's plugin saw %v", b.Data)
	}

	desired := 0
	other := h.create(engine.ClusterCreate{Name: "other", Profile: "proc", DesiredCapacity: &desired})
	h.attach(other, "seen")
	b, err = h.store.GetBinding(h.ctx(), other.ID, policyID(h, "seen"))
	if err != nil {
		t.Fatal(err)
	}
	env, _ := b.Data["properties"].(map[string]any)["env"].(map[string]any)
	if b.Data["type"] != "local.process" || env["TOKEN"] != engine.Redacted {
		t.Errorf("a policy of another plugin saw %v", b.Data)
	}

	end := h.wait(h.act(same, `{"scale_out": {"count": 1}}`))
	if end.Status != model.ActionFailed || end.Data["status"] != "ERROR" || end.Data["status_reason"] != "Nothing seen suits." {
		t.Errorf("refused scale-out: %s %q data %v", end.Status, end.StatusReason, end.Data)
	}
}

func policyID(h *harness, name string) string {
	h.t.Helper()
	p, err := h.store.FindPolicy(h.ctx(), caller.Project, name)
	if err != nil {
		h.t.Fatal(err)
	}
	return p.ID
}
