package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/grovehq/grove/plugins/sdk"
)

func fileProfile() sdk.ProfileType {
	return sdk.ProfileType{
		Type:        "example.file",
		Versions:    []string{"1.0"},
		Description: "Each node is a file in a directory. An example of a stateless profile driver.",
		Schema: sdk.Schema{
			"directory": {Type: sdk.String, Required: true, Description: "Absolute directory the node files go in."},
			"content": {Type: sdk.String, Updatable: true, Default: "node {{name}} index {{index}}\n",
				Description: "What each file holds; {{name}} and {{index}} are replaced."},
		},
		Operations: []string{"RECREATE"},
		Driver:     files{},
		Validate: func(_ context.Context, p sdk.Spec) sdk.Diagnostics {
			if dir, _ := p.Properties["directory"].(string); !filepath.IsAbs(dir) {
				return sdk.Diagnostics{{Field: "properties.directory", Message: fmt.Sprintf("must be an absolute path, got %q.", dir)}}
			}
			return nil
		},
	}
}

// files keeps no state: the file's path is derived from the spec and the
// node, and returned as the physical id.
type files struct{}

func path(p sdk.Spec, n sdk.Node) string {
	return filepath.Join(p.Properties["directory"].(string), n.Name+"-"+n.ID[:min(8, len(n.ID))])
}

func content(p sdk.Spec, n sdk.Node) string {
	c, _ := p.Properties["content"].(string)
	return strings.NewReplacer("{{name}}", n.Name, "{{index}}", fmt.Sprint(n.Index)).Replace(c)
}

func (files) write(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		if err := ctx.Err(); err != nil {
			out[i] = sdk.Result{ID: n.ID, Err: sdk.Retryable(err)}
			continue
		}
		f := path(p, n)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			out[i] = sdk.Result{ID: n.ID, Err: fmt.Errorf("create directory: %w", err)}
			continue
		}
		if err := os.WriteFile(f, []byte(content(p, n)), 0o644); err != nil {
			out[i] = sdk.Result{ID: n.ID, Err: fmt.Errorf("write %s: %w", f, err)}
			continue
		}
		out[i] = sdk.Result{ID: n.ID, PhysicalID: f, Healthy: true, Data: map[string]any{"path": f}}
	}
	return out
}

func (f files) Create(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return f.write(ctx, p, nodes)
}

func (files) Delete(_ context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		out[i] = sdk.Result{ID: n.ID}
		if err := os.Remove(path(p, n)); err != nil && !os.IsNotExist(err) {
			out[i].Err = err
		}
	}
	return out
}

func (files) Check(_ context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	for i, n := range nodes {
		_, err := os.Stat(path(p, n))
		out[i] = sdk.Result{ID: n.ID, Healthy: err == nil, PhysicalID: n.PhysicalID}
		if err != nil {
			out[i].Reason = "the node's file is missing"
		}
	}
	return out
}

func (f files) Update(ctx context.Context, _, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return f.write(ctx, p, nodes)
}

func (f files) Recover(ctx context.Context, p sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	return f.write(ctx, p, nodes)
}
