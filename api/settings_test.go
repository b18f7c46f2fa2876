package api

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestValidateFailoverSettings: grove.failover takes a topology, an
// orchestrate mode, ordered flex counts for flex only, and durations; each
// bad value is named.
func TestValidateFailoverSettings(t *testing.T) {
	for _, tc := range []struct {
		failover string
		want     []string // "field: rule fragment"; none means valid
	}{
		{`{"topology": "failover", "orchestrate": "ha", "ready_period": "16s", "maintenance_grace_period": "60s", "rejoin_grace_period": "90s"}`, nil},
		{`{"topology": "flex", "orchestrate": "start", "flex_min": 1, "flex_max": 3, "flex_target": 2}`, nil},
		{`{"topology": "replicated"}`, nil},
		{`{"topology": "mesh"}`, []string{`failover.topology: "mesh" is not one of "failover", "flex", "replicated", "global".`}},
		{`{"orchestrate": "yes"}`, []string{`failover.orchestrate: "yes" is not one of "no", "start", "ha".`}},
		{`{"flex_target": 2}`, []string{`failover.flex_target: applies only to the flex topology; the topology is "failover".`}},
		{`{"topology": "flex", "flex_min": 3, "flex_max": 2}`, []string{"failover.flex_min: 3 is above flex_max 2."}},
		{`{"topology": "flex", "flex_min": 2, "flex_target": 1}`, []string{"failover.flex_target: 1 is below flex_min 2."}},
		{`{"topology": "flex", "flex_max": 2, "flex_target": 3}`, []string{"failover.flex_target: 3 is above flex_max 2."}},
		{`{"topology": "flex", "flex_target": -1}`, []string{"failover.flex_target: must be an integer from 0"}},
		{`{"ready_period": "soon"}`, []string{`failover.ready_period: "soon" is not a non-negative duration`}},
		{`{"rejoin_grace_period": 90}`, []string{"failover.rejoin_grace_period: must be a duration"}},
		{`{"heartbeat": "5s"}`, []string{"failover.heartbeat: is not a setting here"}},
		{`"ha"`, []string{"config.grove.failover: must be an object."}},
	} {
		var v any
		if err := json.Unmarshal([]byte(tc.failover), &v); err != nil {
			t.Fatal(err)
		}
		errs := ValidateSettings(map[string]any{ConfigFailover: v})
		if len(errs) != len(tc.want) {
			t.Errorf("%s: %v, want %d errors %v", tc.failover, errs, len(tc.want), tc.want)
			continue
		}
		for i, w := range tc.want {
			if got := errs[i].Error(); !strings.HasPrefix(got, w) {
				t.Errorf("%s: %q, want it to start %q", tc.failover, got, w)
			}
		}
	}
}
