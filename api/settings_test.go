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

// TestValidateNodeNameFormat: a node.name.format is refused when any name
// it can expand to would break the node name rule: a literal character
// outside the rule, or an expansion longer than 255 or empty.
func TestValidateNodeNameFormat(t *testing.T) {
	const field = "config.node.name.format: "
	for _, tc := range []struct {
		format any
		want   string // a fragment of the one error; "" means valid
	}{
		{"", ""},
		{"web-$3I", ""},
		{"node-$8R", ""},
		{"x-$4r.$I~_", ""},
		{"ウェブ-$I", ""},
		{"a$0Rb", ""},
		{"$I", ""},
		{strings.Repeat("a", 245) + "$I", ""}, // 245 + 10 digits
		{strings.Repeat("a", 246) + "$I", "up to 256 characters"}, // an index of 10 digits overflows
		{"$255R", ""},
		{"$99999999R", ""}, // cut to 255 by the engine
		{"a$255R", "up to 256 characters"},
		{"%s*?/../ x\x00$255R$255R", `the character '%'`},
		{"web $I", `the character ' '`},
		{"web-\x00$I", `the character '\x00'`},
		{"web/$I", `the character '/'`},
		{"cost-$5", `the character '$'`},                            // not a directive: a literal '$'
		{"$R$R" + strings.Repeat("$R", 30), "up to 256 characters"}, // 32 × 8
		{"$0R", "can expand to an empty name"},
		{"$0r$0R", "can expand to an empty name"},
		{12, `must be a string such as "web-$3I", got 12.`},
	} {
		errs := ValidateSettings(map[string]any{ConfigNodeNameFormat: tc.format})
		if tc.want == "" {
			if len(errs) != 0 {
				t.Errorf("%q: refused: %v", tc.format, errs)
			}
			continue
		}
		if len(errs) != 1 || !strings.HasPrefix(errs[0].Error(), field) || !strings.Contains(errs[0].Error(), tc.want) {
			t.Errorf("%q: %v, want one error %q…%q", tc.format, errs, field, tc.want)
		}
	}
}
