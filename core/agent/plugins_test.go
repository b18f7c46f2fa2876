package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestPluginLabelsAreCheckedAtLoad(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for _, tc := range []struct {
		labels []string
		want   string // "" is valid
	}{
		{[]string{"files"}, ""},
		{[]string{"my-plugin_2.1", "other"}, ""},
		{[]string{"../../x"}, `plugin "../../x" block: the label "../../x" is not a valid plugin name: use 1 to 64 letters, digits, '-', '_' and '.', not starting with '.'`},
		{[]string{"a/b"}, "not a valid plugin name"},
		{[]string{".hidden"}, "not starting with '.'"},
		{[]string{".."}, "not a valid plugin name"},
		{[]string{""}, "not a valid plugin name"},
		{[]string{strings.Repeat("x", 65)}, "not a valid plugin name"},
		{[]string{"twice", "twice"}, `plugin "twice" block: the label is used twice`},
		{[]string{"builtin"}, `plugin "builtin" block: the built-in plugin is part of grove and takes only config`},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "agent.hcl")
		var b strings.Builder
		b.WriteString("data_dir = \"" + dir + "\"\n")
		for _, l := range tc.labels {
			b.WriteString("plugin \"" + l + "\" {\n  command = \"p\"\n  sha256 = \"" + sum + "\"\n}\n")
		}
		os.WriteFile(path, []byte(b.String()), 0o600)
		cfg, err := LoadConfig(path)
		if err == nil {
			err = cfg.Validate()
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("labels %q: %v", tc.labels, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("labels %q: want an error containing %q, got %v", tc.labels, tc.want, err)
		}
	}
}

func TestPluginCallTimeoutIsChecked(t *testing.T) {
	for v, ok := range map[string]bool{"": true, "2s": true, "0s": false, "-1s": false, "soon": false} {
		c := Config{DataDir: t.TempDir(), PluginCallTimeout: v}
		if err := c.Validate(); (err == nil) != ok {
			t.Errorf("plugin_call_timeout %q: %v", v, err)
		} else if err != nil && !strings.Contains(err.Error(), "plugin_call_timeout") {
			t.Errorf("the error names the field: %v", err)
		}
	}
}

// A plugin block's command runs only from the plugin dir: not through
// "..", not from elsewhere by absolute path, not through a link that leads
// out of it.
func TestPluginCommandConfinedToPluginDir(t *testing.T) {
	base := t.TempDir()
	dir := filepath.Join(base, "plugins.d")
	os.MkdirAll(filepath.Join(dir, "sub"), 0o755)
	outside := filepath.Join(base, "evil")
	os.WriteFile(outside, []byte("#!/bin/sh\n"), 0o755)
	for _, name := range []string{"good", "..dots", filepath.Join("sub", "inner")} {
		os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755)
	}
	os.Symlink(outside, filepath.Join(dir, "link-out"))
	os.Symlink(filepath.Join(dir, "good"), filepath.Join(dir, "link-in"))
	for cmd, want := range map[string]string{
		"good":                           "",
		"..dots":                         "", // a name that starts with two dots is still in the dir
		"sub/inner":                      "",
		"link-in":                        "",
		filepath.Join(dir, "good"):       "",
		"missing":                        "", // starting it reports the missing binary
		"../evil":                        "is outside the plugin dir",
		"sub/../../evil":                 "is outside the plugin dir",
		outside:                          "is outside the plugin dir",
		"link-out":                       "is a link to " + outside + ", outside the plugin dir",
		filepath.Join(dir, "..", "evil"): "is outside the plugin dir",
	} {
		path, err := pluginCommand(dir, cmd)
		switch {
		case want == "" && err != nil:
			t.Errorf("command %q: %v", cmd, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("command %q: want an error containing %q, got %v (path %s)", cmd, want, err, path)
		}
	}
}

// The plugin "builtin" block configures the built-in plugin: config alone,
// with keys its types read; a third-party block still needs its command.
func TestBuiltinPluginBlock(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	for body, want := range map[string]string{
		"plugin \"builtin\" {\n  config = { vsphere_url = \"https://vc/sdk\", vsphere_password = \"p\", docker_hosts = \"a=unix:///a.sock\" }\n}\n": "",
		"plugin \"builtin\" {\n  config = { vsphere_usr = \"x\" }\n}\n":                                                                             `plugin "builtin" block: config key "vsphere_usr" is not one the built-in plugin reads; it reads docker_hosts, vsphere_url,`,
		"plugin \"builtin\" {\n  pass_env = [\"GOVC_URL\"]\n}\n":                                                                                    "takes only config",
		"plugin \"builtin\" {\n}\nplugin \"builtin\" {\n}\n":                                                                                        `plugin "builtin" block: the label is used twice`,
		"plugin \"files\" {\n  sha256 = \"" + sum + "\"\n}\n":                                                                                       `plugin "files" block: command is required`,
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "agent.hcl")
		os.WriteFile(path, []byte("data_dir = \""+dir+"\"\n"+body), 0o600)
		cfg, err := LoadConfig(path)
		if err == nil {
			err = cfg.Validate()
		}
		switch {
		case want == "" && err != nil:
			t.Errorf("%s: %v", body, err)
		case want != "" && (err == nil || !strings.Contains(err.Error(), want)):
			t.Errorf("%s: want an error containing %q, got %v", body, want, err)
		case want == "":
			if s := cfg.BuiltinSettings(); s["vsphere_url"] != "https://vc/sdk" || s["docker_hosts"] != "a=unix:///a.sock" || len(s) != 3 {
				t.Errorf("built-in settings %v", s)
			}
		}
	}
}
