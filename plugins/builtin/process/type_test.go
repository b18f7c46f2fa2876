package process

import (
	"strings"
	"testing"
)

// The error other platforms give names the rule and the platform, and
// points to what works there.
func TestUnsupportedPlatformError(t *testing.T) {
	err := unsupportedOn("windows")
	for _, want := range []string{"local.process runs only on Linux", "windows", "container.docker"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
}

// A spec the kernel would refuse at every start is refused when the
// profile is made, naming the property; a usable one passes.
func TestCheckPropertiesRefusesWhatExecRefuses(t *testing.T) {
	pt := Type()
	for _, tc := range []struct {
		name  string
		props map[string]any
		field string
		want  string
	}{
		{"ok", map[string]any{"command": []any{"sleep", "1"}, "env": map[string]any{"A": "1", "B": ""}, "workdir": "/tmp"}, "", ""},
		{"NUL in command", map[string]any{"command": []any{"sleep", "1\x00"}}, "properties.command[1]", "NUL"},
		{"NUL in workdir", map[string]any{"command": []any{"true"}, "workdir": "/tmp/\x00"}, "properties.workdir", "NUL"},
		{"relative workdir", map[string]any{"command": []any{"true"}, "workdir": "tmp"}, "properties.workdir", "absolute"},
		{"NUL in env key", map[string]any{"command": []any{"true"}, "env": map[string]any{"X\x00": "1"}}, "properties.env", `key "X\x00" contains a NUL`},
		{"NUL in env value", map[string]any{"command": []any{"true"}, "env": map[string]any{"X": "1\x00secret"}}, "properties.env", `the value of "X" contains a NUL`},
		{"empty env key", map[string]any{"command": []any{"true"}, "env": map[string]any{"": "1"}}, "properties.env", "a key is empty"},
		{"= in env key", map[string]any{"command": []any{"true"}, "env": map[string]any{"A=B": "1"}}, "properties.env", `key "A=B" contains "="`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			props, diags := pt.Schema.Validate("properties", tc.props)
			if len(diags) > 0 {
				t.Fatalf("schema refused %v: %v", tc.props, diags)
			}
			diags = checkProperties(props)
			if tc.field == "" {
				if len(diags) > 0 {
					t.Fatalf("refused a usable spec: %v", diags)
				}
				return
			}
			if len(diags) != 1 || diags[0].Field != tc.field || !strings.Contains(diags[0].Message, tc.want) {
				t.Fatalf("got %v, want one diagnostic on %s saying %q", diags, tc.field, tc.want)
			}
			if strings.Contains(diags[0].Message, "secret") {
				t.Errorf("diagnostic %q quotes a sensitive env value", diags[0].Message)
			}
		})
	}
}
