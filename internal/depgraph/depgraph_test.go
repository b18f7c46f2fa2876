package depgraph_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/grovehq/grove/internal/depgraph"
)

func TestChainNamesTheImportPath(t *testing.T) {
	g, err := depgraph.Load("encoding/json")
	if err != nil {
		t.Fatal(err)
	}
	pkgs := g.Packages()
	if !slices.Contains(pkgs, "encoding/json") || !slices.Contains(pkgs, "reflect") {
		t.Fatalf("Packages() = %v, want encoding/json and its dependency reflect", pkgs)
	}
	if !slices.IsSorted(pkgs) {
		t.Errorf("Packages() is not sorted: %v", pkgs)
	}
	chain := strings.Split(g.Chain("reflect"), " -> ")
	if chain[0] != "encoding/json" || chain[len(chain)-1] != "reflect" {
		t.Errorf("Chain(reflect) = %q, want encoding/json -> ... -> reflect", g.Chain("reflect"))
	}
	if got := g.Chain("encoding/json"); got != "encoding/json" {
		t.Errorf("Chain of a root = %q, want the root alone", got)
	}
}

func TestLoadReportsGoListFailure(t *testing.T) {
	_, err := depgraph.Load("github.com/grovehq/grove/no/such/package")
	if err == nil || !strings.Contains(err.Error(), "no/such/package") {
		t.Fatalf("Load of a missing package: err = %v, want go list's error naming it", err)
	}
}
