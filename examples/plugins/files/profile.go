package main

import (
	"context"
	"errors"
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
			var props fileProps
			if err := p.Decode(&props); err != nil {
				var de *sdk.DecodeError
				if errors.As(err, &de) {
					return sdk.Diagnostics{de.Diagnostic()}
				}
				return sdk.Diagnostics{{Field: "properties", Message: err.Error()}}
			}
			if !filepath.IsAbs(props.Directory) {
				return sdk.Diagnostics{{Field: "properties.directory", Message: fmt.Sprintf("must be an absolute path, got %q.", props.Directory)}}
			}
			return nil
		},
	}
}

// fileProps are the profile's properties, as the schema above fills them in.
type fileProps struct {
	Directory string `json:"directory"`
	Content   string `json:"content"`
}

// files keeps no state: the file's path is derived from the spec and the
// node, and returned as the physical id.
type files struct{}

func (p fileProps) path(n sdk.Node) string {
	return filepath.Join(p.Directory, n.Name+"-"+n.ID[:min(8, len(n.ID))])
}

func (p fileProps) content(n sdk.Node) string {
	return strings.NewReplacer("{{name}}", n.Name, "{{index}}", fmt.Sprint(n.Index)).Replace(p.Content)
}

// each decodes the spec's properties and calls do for every node; when the
// properties cannot be read, every node fails with the reason.
func each(p sdk.Spec, nodes []sdk.Node, do func(fileProps, sdk.Node) sdk.Result) []sdk.Result {
	out := make([]sdk.Result, len(nodes))
	var props fileProps
	err := p.Decode(&props)
	for i, n := range nodes {
		if err != nil {
			out[i] = sdk.Result{ID: n.ID, Err: fmt.Errorf("the properties of profile %s cannot be read: %w", p.ID, err)}
			continue
		}
		out[i] = do(props, n)
	}
	return out
}

func (files) write(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return each(p, nodes, func(props fileProps, n sdk.Node) sdk.Result {
		if err := ctx.Err(); err != nil {
			return sdk.Result{ID: n.ID, Err: sdk.Retryable(err)}
		}
		f := props.path(n)
		if err := os.MkdirAll(filepath.Dir(f), 0o755); err != nil {
			return sdk.Result{ID: n.ID, Err: fmt.Errorf("create directory: %w", err)}
		}
		if err := os.WriteFile(f, []byte(props.content(n)), 0o644); err != nil {
			return sdk.Result{ID: n.ID, Err: fmt.Errorf("write %s: %w", f, err)}
		}
		return sdk.Result{ID: n.ID, PhysicalID: f, Healthy: true, Data: map[string]any{"path": f}}
	})
}

func (f files) Create(ctx context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return f.write(ctx, p, nodes)
}

func (files) Delete(_ context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return each(p, nodes, func(props fileProps, n sdk.Node) sdk.Result {
		if err := os.Remove(props.path(n)); err != nil && !os.IsNotExist(err) {
			return sdk.Result{ID: n.ID, Err: err}
		}
		return sdk.Result{ID: n.ID}
	})
}

func (files) Check(_ context.Context, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return each(p, nodes, func(props fileProps, n sdk.Node) sdk.Result {
		r := sdk.Result{ID: n.ID, PhysicalID: n.PhysicalID}
		if _, err := os.Stat(props.path(n)); err != nil {
			r.Reason = "the node's file is missing"
		} else {
			r.Healthy = true
		}
		return r
	})
}

func (f files) Update(ctx context.Context, _, p sdk.Spec, nodes []sdk.Node) []sdk.Result {
	return f.write(ctx, p, nodes)
}

func (f files) Recover(ctx context.Context, p sdk.Spec, nodes []sdk.Node, _ string, _ map[string]any) []sdk.Result {
	return f.write(ctx, p, nodes)
}
