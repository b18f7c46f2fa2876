// Package depgraph lets tests hold a package to its import boundary: it
// loads the transitive imports of packages with `go list -deps` and names,
// for a dependency that crosses the boundary, the chain of imports that
// brings it in, so the failure says which import to remove.
package depgraph

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os/exec"
	"slices"
	"strings"
)

// Graph is the import graph of some packages and everything they depend
// on, transitively; test-only imports are not part of it.
type Graph struct {
	roots   []string
	imports map[string][]string
}

// Load runs `go list -deps` on patterns (import paths or patterns such as
// "github.com/grovehq/grove/api/...") and returns their import graph.
func Load(patterns ...string) (*Graph, error) {
	args := append([]string{"list", "-deps", "-json=ImportPath,Imports,DepOnly"}, patterns...)
	out, err := exec.Command("go", args...).Output()
	if err != nil {
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return nil, fmt.Errorf("go list %s: %w\n%s", strings.Join(patterns, " "), err, exit.Stderr)
		}
		return nil, fmt.Errorf("go list %s: %w", strings.Join(patterns, " "), err)
	}
	g := &Graph{imports: map[string][]string{}}
	dec := json.NewDecoder(strings.NewReader(string(out)))
	for {
		var p struct {
			ImportPath string
			Imports    []string
			DepOnly    bool
		}
		if err := dec.Decode(&p); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("read go list output: %w", err)
		}
		g.imports[p.ImportPath] = p.Imports
		if !p.DepOnly {
			g.roots = append(g.roots, p.ImportPath)
		}
	}
	return g, nil
}

// Packages returns every package in the graph, the roots and all they
// depend on, sorted so failures read the same on every run.
func (g *Graph) Packages() []string {
	return slices.Sorted(maps.Keys(g.imports))
}

// Chain returns a shortest chain of imports from one of the roots to pkg,
// as "a -> b -> pkg", or pkg alone when pkg is a root.
func (g *Graph) Chain(pkg string) string {
	prev := map[string]string{}
	queue := append([]string(nil), g.roots...)
	for _, r := range g.roots {
		prev[r] = ""
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		if p == pkg {
			chain := []string{p}
			for q := prev[p]; q != ""; q = prev[q] {
				chain = append([]string{q}, chain...)
			}
			return strings.Join(chain, " -> ")
		}
		for _, imp := range g.imports[p] {
			if _, seen := prev[imp]; !seen {
				prev[imp] = p
				queue = append(queue, imp)
			}
		}
	}
	return pkg
}
