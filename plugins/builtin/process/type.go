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
	"path/filepath"

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
			"env":          {Type: schema.Map, Updatable: true, Sensitive: true, Description: "Environment variables, besides PATH and the GROVE_NODE_* variables; nothing of the agent's environment is passed on. The values are sensitive: the API shows them as (sensitive) and the store keeps them encrypted.", Elem: &schema.Property{Type: schema.String}},
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
			if wd, _ := p.Properties["workdir"].(string); wd != "" && !filepath.IsAbs(wd) {
				return schema.Diagnostics{{Field: "properties.workdir", Message: fmt.Sprintf("must be an absolute path, got %q.", wd)}}
			}
			return nil
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
