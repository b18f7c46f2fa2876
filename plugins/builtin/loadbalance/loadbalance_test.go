package loadbalance

import (
	"context"
	"testing"

	"github.com/grovehq/grove/plugins/sdk"
)

// TestStatusesHealthMonitorKey: Octavia sends a pool's monitor under
// "health_monitor" (gophercloud reads "healthmonitor" and finds nothing);
// both are read.
func TestStatusesHealthMonitorKey(t *testing.T) {
	octavia := `{"statuses": {"loadbalancer": {"id": "lb", "listeners": [{"id": "l", "pools": [{"id": "p", "health_monitor": {"id": "hm-octavia"}, "members": []}]}]}}}`
	old := `{"statuses": {"loadbalancer": {"id": "lb", "listeners": [{"id": "l", "pools": [{"id": "p", "healthmonitor": {"id": "hm-old"}}]}]}}}`
	for body, want := range map[string]string{octavia: "hm-octavia", old: "hm-old"} {
		s, err := ParseStatuses([]byte(body))
		if err != nil {
			t.Fatal(err)
		}
		if got := s.Monitor("p"); got != want {
			t.Errorf("Monitor = %q, want %q", got, want)
		}
		if got := s.Monitor("other"); got != "" {
			t.Errorf("Monitor of another pool = %q", got)
		}
	}
}

func TestValidate(t *testing.T) {
	v := Type().Validate
	cases := []struct {
		version string
		props   map[string]any
		want    []string
	}{
		{"1.3", map[string]any{"vip": map[string]any{"subnet": "s"}}, nil},
		{"1.0", map[string]any{}, []string{"properties.vip"}},
		{"1.1", map[string]any{"vip": map[string]any{"network": "n"}, "availability_zone": "az1", "flavor_id": "f"}, []string{"properties.availability_zone", "properties.flavor_id"}},
		{"1.2", map[string]any{"vip": map[string]any{"subnet": "s"}, "availability_zone": "az1"}, nil},
		{"1.3", map[string]any{"vip": map[string]any{"subnet": "s"}, "loadbalancer": "lb"}, []string{"properties.pool.id"}},
	}
	for _, tc := range cases {
		ds := v(context.Background(), sdk.Spec{Version: tc.version, Properties: tc.props})
		var got []string
		for _, d := range ds {
			got = append(got, d.Field)
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s %v: diagnostics %v, want fields %v", tc.version, tc.props, ds, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s %v: diagnostics %v, want fields %v", tc.version, tc.props, ds, tc.want)
			}
		}
	}
}

// TestAttachRefusesOtherProfiles: Senlin's policy is for os.nova.server.
func TestAttachRefusesOtherProfiles(t *testing.T) {
	_, err := Type().Policy.Attach(context.Background(), sdk.Spec{Properties: map[string]any{}}, sdk.Cluster{Name: "web", ProfileType: "local.process-1.0"})
	if err == nil || err.Error() != "The load-balancing policy handles clusters of profile type os.nova.server; cluster 'web' has local.process." {
		t.Fatalf("attach: %v", err)
	}
}
