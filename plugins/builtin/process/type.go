// Package process is the local.process profile driver: each node is an OS
// process on this machine, started by one supervising process per plugin
// data directory. Processes and their supervisor are detached from the
// plugin, so they outlive a restart of the plugin and of the agent, and are
// found again from the state the engine stores. The driver needs Linux (/proc, parent-death
// signals); elsewhere the type is registered but refuses profiles and nodes
// with an error that says so.
package process

import (
	"context"
	"fmt"
	"maps"
	"path/filepath"
	"slices"
	"strings"

	"github.com/grovehq/grove/plugins/sdk"
	"github.com/grovehq/grove/plugins/sdk/schema"
)

// TypeName is the profile type.
const TypeName = "local.process"

// Type returns the profile type registration.
func Type() sdk.ProfileType {
	d := &Driver{}
	return sdk.ProfileType{
		Type:        TypeName,
		Versions:    []string{"1.0"},
		Description: "Each node is a process on the agent's machine, started from command with env and workdir. The engine allocates a 127.0.0.1 port per node (GROVE_NODE_PORT).",
		Schema: schema.Schema{
			"command": {Type: schema.List, Required: true, Updatable: true, Description: "The program and its arguments.",
				Elem: &schema.Property{Type: schema.String}, Constraints: []schema.Constraint{schema.Length(schema.F(1), nil)}},
			"env":          {Type: schema.Map, Updatable: true, Sensitive: true, Description: "Environment variables, besides PATH and the GROVE_NODE_* variables; a key must be non-empty without '=', and no key or value may hold a NUL. Nothing of the agent's environment is passed on. The values are sensitive: the API shows them as (sensitive) and the store keeps them encrypted.", Elem: &schema.Property{Type: schema.String}},
			"workdir":      {Type: schema.String, Updatable: true, Description: "Working directory; defaults to the node's runtime directory."},
			"stop_timeout": {Type: schema.Integer, Updatable: true, Default: int64(10), Description: "Seconds between SIGTERM and SIGKILL when a node is stopped.", Constraints: []schema.Constraint{schema.Range(schema.F(0), schema.F(3600))}},
		},
		Operations: []string{"RECREATE", "REBOOT"},
		NodeOperations: []sdk.NodeOperation{
			{Name: "start", Description: "Start the node's process again, with the node's id, name and port.", Parameters: schema.Schema{}},
			{Name: "stop", Description: "Stop the node's process (SIGTERM, then SIGKILL after stop_timeout); the node stays, WARNING, until started.", Parameters: schema.Schema{}},
			{Name: "restart", Description: "Stop the node's process and start it again.", Parameters: schema.Schema{}},
		},
		NeedsPort: true,
		Driver:    d,
		Watch:     d.watcher(),
		Validate: func(_ context.Context, p sdk.Spec) schema.Diagnostics {
			if err := supported(); err != nil {
				return schema.Diagnostics{{Field: "type", Message: err.Error()}}
			}
			return checkProperties(p.Properties)
		},
	}
}

// WrapCommand is the hidden grove sub-command that ran a node's process
// before the supervisor (one wrapper per node). New nodes no longer use it;
// it is kept so wrappers of nodes created by an earlier version, and tools
// that start one, keep working until those nodes are deleted.
const WrapCommand = "__process-wrap"

// SupervisorCommand is the hidden grove sub-command that runs the one
// supervisor of a plugin data directory (`grove __process-supervisor DIR`):
// it starts every node's process, is their parent and records their exit
// statuses in the nodes' runtime directories, which is how check can tell
// "exited with status 3" from "vanished". See supervisor.go.
const SupervisorCommand = "__process-supervisor"

// unsupportedOn is the error local.process gives on an operating system
// other than Linux: it finds and watches its processes through Linux's /proc
// and parent-death signal.
func unsupportedOn(goos string) error {
	return fmt.Errorf("local.process runs only on Linux; this agent runs on %s. Use container.docker or a plugin for this platform.", goos)
}

// checkProperties refuses what the kernel would refuse at every start: an
// argument, directory or environment entry cannot hold a NUL (execve takes
// C strings), and an environment key cannot be empty or hold '=' (the entry
// is KEY=VALUE, so the key would end at the first '='). Caught here, the
// profile is refused with the property named instead of every node going
// to ERROR with "invalid argument".
func checkProperties(props map[string]any) schema.Diagnostics {
	var diags schema.Diagnostics
	add := func(field, format string, args ...any) {
		diags = append(diags, schema.Diagnostic{Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if cmd, ok := props["command"].([]any); ok {
		for i, v := range cmd {
			if s, _ := v.(string); strings.ContainsRune(s, 0) {
				add(fmt.Sprintf("properties.command[%d]", i), "%q contains a NUL character, which a program's arguments cannot hold.", s)
			}
		}
	}
	if wd, _ := props["workdir"].(string); wd != "" {
		switch {
		case strings.ContainsRune(wd, 0):
			add("properties.workdir", "%q contains a NUL character, which a path cannot hold.", wd)
		case !filepath.IsAbs(wd):
			add("properties.workdir", "must be an absolute path, got %q.", wd)
		}
	}
	if env, ok := props["env"].(map[string]any); ok {
		for _, k := range slices.Sorted(maps.Keys(env)) {
			switch {
			case k == "":
				add("properties.env", "a key is empty; an environment variable needs a name.")
			case strings.ContainsRune(k, 0):
				add("properties.env", "key %q contains a NUL character, which an environment variable cannot hold.", k)
			case strings.ContainsRune(k, '='):
				add("properties.env", "key %q contains \"=\", which ends an environment variable's name.", k)
			}
			// The value is sensitive: name the key, never quote the value.
			if s, _ := env[k].(string); strings.ContainsRune(s, 0) {
				add("properties.env", "the value of %q contains a NUL character, which an environment variable cannot hold.", k)
			}
		}
	}
	return diags
}
