package sdk_test

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestSDKImportsNoCore keeps the SDK free of Grove's engine: plugin authors
// import plugins/sdk and nothing that drags the rest of Grove in. The SDK
// is its own module, so it could reach Grove only by requiring Grove's
// module; this also catches an import of any other package of it.
func TestSDKImportsNoCore(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-test", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	for _, pkg := range strings.Split(string(out), "\n") {
		pkg, _, _ = strings.Cut(pkg, " ") // test variants: "p [p.test]"
		pkg = strings.TrimSuffix(strings.TrimSuffix(pkg, ".test"), "_test")
		if strings.HasPrefix(pkg, "github.com/grovehq/grove/") && pkg != "github.com/grovehq/grove/plugins/sdk" &&
			!strings.HasPrefix(pkg, "github.com/grovehq/grove/plugins/sdk/") {
			t.Errorf("plugins/sdk depends on %s, which is not part of the SDK", pkg)
		}
	}
}

// TestSDKDependenciesHaveReasons holds go.mod to dependencies.txt: every
// module the SDK requires is listed there with the reason a plugin needs
// it, the list names nothing go.mod no longer requires, and the module has
// no replace directives (they would not apply to plugins that require it).
func TestSDKDependenciesHaveReasons(t *testing.T) {
	out, err := exec.Command("go", "mod", "edit", "-json").Output()
	if err != nil {
		t.Fatalf("go mod edit -json: %v", err)
	}
	var mod struct {
		Module  struct{ Path string }
		Require []struct{ Path string }
		Replace []struct{ Old struct{ Path string } }
	}
	if err := json.Unmarshal(out, &mod); err != nil {
		t.Fatal(err)
	}
	if mod.Module.Path != "github.com/grovehq/grove/plugins/sdk" {
		t.Fatalf("the test runs in the module %s, not the SDK's", mod.Module.Path)
	}
	for _, r := range mod.Replace {
		t.Errorf("plugins/sdk/go.mod replaces %s; plugins requiring the SDK would not see it", r.Old.Path)
	}

	f, err := os.Open("dependencies.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	reasons := map[string]string{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		path, reason, _ := strings.Cut(line, " ")
		if strings.TrimSpace(reason) == "" {
			t.Errorf("dependencies.txt line %d lists %s without a reason", n, path)
		}
		reasons[path] = strings.TrimSpace(reason)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if len(reasons) == 0 {
		t.Fatal("dependencies.txt lists no modules")
	}

	required := map[string]bool{}
	for _, r := range mod.Require {
		required[r.Path] = true
		if _, ok := reasons[r.Path]; !ok {
			t.Errorf("plugins/sdk/go.mod requires %s, which dependencies.txt does not list: every plugin would build against it, so add it there with the reason, or drop it", r.Path)
		}
	}
	for path := range reasons {
		if !required[path] {
			t.Errorf("dependencies.txt lists %s, which plugins/sdk/go.mod no longer requires: remove the line", path)
		}
	}
}
