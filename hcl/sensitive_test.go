package hcl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
)

// TestReplaceShowsNoSensitiveValue: the API shows a profile's env as
// "(sensitive)"; a plan that replaces the profile lists env only when what
// can be seen changed (a variable added), or when nothing else explains
// the replacement, and never prints a new value of it.
func TestReplaceShowsNoSensitiveValue(t *testing.T) {
	old := &api.Profile{Spec: map[string]any{"type": "local.process", "version": "1.0", "properties": map[string]any{
		"command": []any{"app"}, "env": map[string]any{"TOKEN": "(sensitive)"}}}}
	plan := func(cmd string, env map[string]any) string {
		r := &remote{profiles: map[string]*api.Profile{"old": old}}
		s := &Snapshot{Profiles: map[string]*Profile{"p": {Name: "p", Type: "local.process", Version: "1.0",
			Properties: map[string]any{"command": []any{cmd}, "env": env}}}}
		return fmt.Sprintf("%+v", specFields(r, s, Ref{Kind: "profile", Name: "p"}, "old"))
	}
	for name, tc := range map[string]struct {
		got, want string
		absent    []string
	}{
		"command changed":        {plan("app2", map[string]any{"TOKEN": "s3cret"}), "properties.command", []string{"properties.env", "s3cret"}},
		"only the value changed": {plan("app", map[string]any{"TOKEN": "s3cret"}), "properties.env", []string{"s3cret"}},
		"a variable added":       {plan("app2", map[string]any{"TOKEN": "s3cret", "MORE": "x-secret"}), "properties.env", []string{"s3cret", "x-secret"}},
	} {
		if !strings.Contains(tc.got, tc.want) {
			t.Errorf("%s: the plan lists %s, want %s", name, tc.got, tc.want)
		}
		for _, a := range tc.absent {
			if strings.Contains(tc.got, a) {
				t.Errorf("%s: the plan shows %s: %s", name, a, tc.got)
			}
		}
	}
}
