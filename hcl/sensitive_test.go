package hcl

import (
	"fmt"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/plugins/sdk/schema"
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

// TestCreateShowsNoSensitiveValue: a profile to be created shows its
// sensitive properties as the API will, "(sensitive)", keeping a map's keys;
// the rest of its spec is shown as written.
func TestCreateShowsNoSensitiveValue(t *testing.T) {
	sc := schema.Schema{
		"command": {Type: schema.List, Elem: &schema.Property{Type: schema.String}},
		"env":     {Type: schema.Map, Sensitive: true, Elem: &schema.Property{Type: schema.String}},
		"connection": {Type: schema.Map, Schema: schema.Schema{
			"user":     {Type: schema.String},
			"password": {Type: schema.String, Sensitive: true},
		}},
	}
	s := &Snapshot{Profiles: map[string]*Profile{"p": {Name: "p", Type: "t", Version: "1.0", schema: sc, Properties: map[string]any{
		"command": []any{"app"}, "env": map[string]any{"TOKEN": "s3cret"},
		"connection": map[string]any{"user": "ops", "password": "hunter2"}}}}}
	got := strings.Join(createLines(s, Ref{Kind: "profile", Name: "p"}), "\n")
	for _, want := range []string{`properties.command = ["app"]`, `properties.env = {"TOKEN":"(sensitive)"}`, `"user":"ops"`, `"password":"(sensitive)"`} {
		if !strings.Contains(got, want) {
			t.Errorf("the create lists\n%s\nwant %s", got, want)
		}
	}
	for _, secret := range []string{"s3cret", "hunter2"} {
		if strings.Contains(got, secret) {
			t.Errorf("the create shows %s:\n%s", secret, got)
		}
	}
}
