package health

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
)

// spec fills a health policy's properties as the schema would, from
// detection modes and recovery actions given as JSON-like values.
func spec(t *testing.T, props map[string]any) sdk.Spec {
	t.Helper()
	filled, diags := Schema().Validate("properties", props)
	if len(diags) > 0 {
		t.Fatalf("schema: %v", diags)
	}
	return sdk.Spec{ID: "hp", Properties: filled}
}

func basic(modes ...any) map[string]any {
	return map[string]any{"detection": map[string]any{"detection_modes": modes}, "recovery": map[string]any{}}
}

// TestType holds the registration to Senlin's: versions 1.0 to 1.2,
// priority 600, singleton, BEFORE and AFTER of the disruptive actions, and
// the defaults.
func TestType(t *testing.T) {
	pt := Type()
	if pt.Type != "senlin.policy.health" || !reflect.DeepEqual(pt.Versions, []string{"1.0", "1.1", "1.2"}) || pt.Priority != 600 || !pt.Singleton || len(pt.Targets) != 14 {
		t.Errorf("registration %s %v %d %v %d targets", pt.Type, pt.Versions, pt.Priority, pt.Singleton, len(pt.Targets))
	}
	s := spec(t, basic(map[string]any{"type": "NODE_STATUS_POLL_URL", "options": map[string]any{"poll_url": "http://x/{nodename}"}}))
	p, err := props(s)
	if err != nil {
		t.Fatal(err)
	}
	d, o := p.Detection, p.Detection.DetectionModes[0].Options
	if d.Interval != 60 || d.NodeUpdateTimeout != 300 || d.RecoveryConditional != "ANY_FAILED" || !o.PollURLSSLVerify || !o.PollURLConnErrorAsUnhealty ||
		o.PollURLRetryLimit != 3 || o.PollURLRetryInterval != 3 || p.Recovery.NodeDeleteTimeout != 20 || p.Recovery.NodeForceRecreate {
		t.Errorf("defaults %+v", p)
	}
}

// TestValidate holds Senlin's rules and Grove's, each naming its field.
func TestValidate(t *testing.T) {
	poll := map[string]any{"type": "NODE_STATUS_POLLING"}
	cases := []struct {
		name  string
		props map[string]any
		field string
	}{
		{"two recovery actions", map[string]any{"detection": map[string]any{}, "recovery": map[string]any{"actions": []any{
			map[string]any{"name": "RECREATE"}, map[string]any{"name": "REBOOT"}}}}, "properties.recovery.actions"},
		{"an interval under the minimum", map[string]any{"detection": map[string]any{"interval": 30}, "recovery": map[string]any{}}, "properties.detection.interval"},
		{"a mode twice", basic(poll, poll), "properties.detection.detection_modes[1].type"},
		{"lifecycle events with another mode", basic(map[string]any{"type": "LIFECYCLE_EVENTS"}, poll), "properties.detection.detection_modes"},
		{"a poll URL mode without a URL", basic(map[string]any{"type": "NODE_STATUS_POLL_URL"}), "properties.detection.detection_modes[0].options.poll_url"},
		{"hypervisor polling with node status polling", basic(poll, map[string]any{"type": "HYPERVISOR_STATUS_POLLING"}), ""},
		{"node status polling", basic(poll), ""},
		{"lifecycle events alone", basic(map[string]any{"type": "LIFECYCLE_EVENTS"}), ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := Type().Validate(context.Background(), spec(t, c.props))
			if c.field == "" {
				if d != nil {
					t.Errorf("refused: %v", d)
				}
				return
			}
			if len(d) != 1 || d[0].Field != c.field {
				t.Errorf("diagnostics %v, want one on %s", d, c.field)
			}
		})
	}
}

// TestAttachAndCheck: attach leaves the registry entry in the binding's
// data and refuses REBOOT on a cluster that is not Nova's; the check
// records data.health before a scale-out and nothing around a scale-in.
func TestAttachAndCheck(t *testing.T) {
	pt := Type()
	props := basic(map[string]any{"type": "NODE_STATUS_POLL_URL", "options": map[string]any{"poll_url": "http://x/{nodename}"}})
	s := spec(t, props)
	noop := sdk.Cluster{Name: "c", ProfileType: "grove.noop-1.0", Profile: sdk.Spec{Type: "grove.noop"}}
	data, err := pt.Policy.Attach(context.Background(), s, noop)
	if err != nil {
		t.Fatal(err)
	}
	reg := data["health"].(map[string]any)
	if reg["interval"] != 60 || reg["recover_action"] != "RECREATE" || reg["recovery_conditional"] != "ANY_FAILED" || len(reg["detection_modes"].([]any)) != 1 {
		t.Errorf("registry %v", reg)
	}
	props["recovery"] = map[string]any{"actions": []any{map[string]any{"name": "REBOOT"}}}
	if _, err := pt.Policy.Attach(context.Background(), spec(t, props), noop); err == nil || !strings.Contains(err.Error(), "os.nova.server") {
		t.Errorf("REBOOT on a grove.noop cluster: %v", err)
	}
	res, err := pt.Policy.Check(context.Background(), sdk.CheckRequest{Phase: "BEFORE", Policy: s, Cluster: noop, Action: sdk.Action{Name: "CLUSTER_SCALE_OUT"}})
	if err != nil || !reflect.DeepEqual(res.Data["health"], map[string]any{"recover_action": "RECREATE", "fencing": []string(nil)}) {
		t.Errorf("before a scale-out: %+v %v", res, err)
	}
	res, _ = pt.Policy.Check(context.Background(), sdk.CheckRequest{Phase: "BEFORE", Policy: s, Cluster: noop, Action: sdk.Action{Name: "CLUSTER_SCALE_IN"}})
	if res.Data != nil {
		t.Errorf("before a scale-in: %+v", res)
	}
}
