package model_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/grovehq/grove/core/model"
)

// TestValidHostLabels: keys, values and the count are each held to their
// rule, and the error names the field and the rule.
func TestValidHostLabels(t *testing.T) {
	many := func(n int) map[string]string {
		m := map[string]string{}
		for i := range n {
			m[fmt.Sprintf("k%d", i)] = "v"
		}
		return m
	}
	for _, c := range []struct {
		name   string
		labels map[string]string
		want   string // "" for valid
	}{
		{"none", nil, ""},
		{"usual", map[string]string{"rack": "r1", "disk.type": "ssd", "example.com/zone": "a b"}, ""},
		{"the most allowed", many(model.MaxHostLabels), ""},
		{"one too many", many(model.MaxHostLabels + 1), "labels has 65 labels; at most 64 are allowed"},
		{"empty key", map[string]string{"": "x"}, `labels key "" is not valid`},
		{"key of a space", map[string]string{"a b": "x"}, `labels key "a b" is not valid`},
		{"value too long", map[string]string{"k": strings.Repeat("v", 256)}, `labels value of "k" is 256 characters long; at most 255 are allowed`},
		{"NUL in a value", map[string]string{"k": "a\x00b"}, `labels value of "k" is not valid: a label value cannot contain control characters`},
		{"newline in a value", map[string]string{"k": "a\nb"}, `labels value of "k" is not valid`},
	} {
		t.Run(c.name, func(t *testing.T) {
			err := model.ValidHostLabels("labels", c.labels)
			switch {
			case c.want == "" && err != nil:
				t.Fatalf("want valid, got %v", err)
			case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
				t.Fatalf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}
