package hcl

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// FuzzLoad feeds arbitrary sources to the parser, evaluator and validator:
// nothing may panic, and every failure must be a diagnostic with a summary.
func FuzzLoad(f *testing.F) {
	files, _ := filepath.Glob("../examples/hcl/*/*.hcl")
	for _, file := range files {
		if b, err := os.ReadFile(file); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte(base))
	f.Add([]byte(`variable "x" { type = list(number) }` + "\n" + `locals { y = var.x[0] }`))
	f.Add([]byte(`cluster "c" { profile = profile.p  restart { condition = "any" } }`))
	f.Fuzz(func(t *testing.T, src []byte) {
		// A definition that takes long to evaluate is a bug too (a user
		// waits on it): fail with the input rather than hang the fuzzer.
		timer := time.AfterFunc(10*time.Second, func() { panic(fmt.Sprintf("Load took over 10s on %q", src)) })
		defer timer.Stop()
		def, diags := LoadSources(map[string][]byte{"fuzz.hcl": src}, Options{Env: []string{}, Vars: []string{"nodes=2"}})
		for _, d := range diags {
			if d.Summary == "" {
				t.Fatalf("a diagnostic without a summary: %#v", d)
			}
		}
		if def == nil {
			t.Fatal("Load returned no definition")
		}
		if !diags.HasErrors() {
			for _, d := range Validate(def, builtinSchemas(t)) {
				if d.Summary == "" {
					t.Fatalf("a validation diagnostic without a summary: %#v", d)
				}
			}
		}
	})
}
