package hcl

import (
	"fmt"
	"testing"

	hclv2 "github.com/hashicorp/hcl/v2"
)

// TestClusterSizeRules checks that each rule the API applies to a cluster's
// sizes and timeout is a diagnostic at the attribute at fault, so that a
// definition that validates also applies.
func TestClusterSizeRules(t *testing.T) {
	const head = "profile \"p\" {\n  type    = \"local.process\"\n  version = \"1.0\"\n  properties {\n    command = [\"/bin/true\"]\n  }\n}\n\ncluster \"c\" {\n  profile = profile.p\n"
	// The attributes start on line 11; values are at column 24.
	cases := []struct {
		attrs string
		want  string
		line  int
	}{
		{"  desired_capacity   = -1\n", "desired_capacity must be a non-negative integer of at most 2147483647, got -1.", 11},
		{"  desired_capacity   = 2147483648\n", "desired_capacity must be a non-negative integer of at most 2147483647, got 2147483648.", 11},
		{"  min_size           = -2\n", "min_size must be a non-negative integer of at most 2147483647, got -2.", 11},
		{"  max_size           = -2\n", "max_size must be -1 (unlimited) or a non-negative integer of at most 2147483647, got -2.", 11},
		{"  max_size           = 2147483648\n", "max_size must be -1 (unlimited) or a non-negative integer of at most 2147483647, got 2147483648.", 11},
		{"  timeout            = -5\n", "timeout must be a non-negative number of seconds, got -5.", 11},
		{"  timeout            = 18446744074\n", "timeout must be at most 2147483647 seconds, got 18446744074.", 11},
		{"  timeout            = 2147483648\n", "timeout must be at most 2147483647 seconds, got 2147483648.", 11},
		{"  timeout            = 1e30\n", "timeout must be a whole number between", 11},
		{"  min_size           = 5\n  max_size           = 3\n", "min_size (5) must not be greater than max_size (3).", 11},
		{"  min_size           = 2\n  desired_capacity   = 1\n", "desired_capacity (1) must not be less than min_size (2).", 12},
		{"  max_size           = 2\n  desired_capacity   = 3\n", "desired_capacity (3) must not be greater than max_size (2).", 12},
		{"  binding {\n    policy   = \"x\"\n    priority = -1\n  }\n", "priority must be a non-negative integer of at most 2147483647, got -1.", 13},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			src := head + c.attrs + "}\n"
			def, diags := load(t, src, Options{Env: []string{}})
			col := 24
			if c.line == 13 {
				col = 16
			}
			diagAt(t, def, diags, c.want, c.line, col)
		})
	}

	// What the API accepts validates: -1 is an unlimited max_size, the
	// largest timeout fits, desired_capacity may be left to min_size.
	for _, attrs := range []string{
		"  max_size = -1\n  desired_capacity = 50\n",
		"  timeout = 2147483647\n",
		"  min_size = 2\n  max_size = 2\n",
		"  min_size = 0\n  desired_capacity = 0\n  max_size = 0\n  timeout = 0\n",
	} {
		_, diags := load(t, head+attrs+"}\n", Options{Env: []string{}})
		if len(diags) > 0 {
			t.Errorf("%q: %v", attrs, diags)
		}
	}

	// Over the agent's default node limit is a warning: an agent may be
	// configured for more.
	_, diags := load(t, head+fmt.Sprintf("  desired_capacity = %d\n", defaultMaxNodesPerCluster+1)+"}\n", Options{Env: []string{}})
	if diags.HasErrors() || len(diags) != 1 || diags[0].Severity != hclv2.DiagWarning || diags[0].Subject.Start.Line != 11 {
		t.Errorf("over the default node limit: %v", diags)
	}
}
