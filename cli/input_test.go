package cli

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
)

// TestFileInputsBounded: every file a user names to the CLI is read up to
// its limit and no further: one over it (or endless, /dev/zero) is an
// error naming the flag, the file and the limit, and nothing is sent.
func TestFileInputsBounded(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("GROVE_ADDR", srv.URL)
	t.Setenv("GROVE_TOKEN", "")

	dir := t.TempDir()
	big := filepath.Join(dir, "big.yaml")
	// Valid YAML past the limit, so only the limit can refuse it.
	if err := os.WriteFile(big, []byte("type: x\n#"+strings.Repeat("y", maxInputBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	bigHCL := filepath.Join(dir, "big.hcl")
	if err := os.WriteFile(bigHCL, bytes.Repeat([]byte("\n"), maxInputBytes+1), 0o644); err != nil {
		t.Fatal(err)
	}
	paths := []string{big}
	if runtime.GOOS == "linux" {
		paths = append(paths, "/dev/zero")
	}
	type tc struct {
		args []string
		want string
	}
	var cases []tc
	for _, p := range paths {
		cases = append(cases,
			tc{[]string{"profile", "create", "-spec-file", p, "px"}, "-spec-file " + p + " holds more than 1 MiB"},
			tc{[]string{"policy", "create", "-spec-file", p, "px"}, "-spec-file " + p + " holds more than 1 MiB"},
			tc{[]string{"profile", "validate", "-spec-file", p}, "-spec-file " + p + " holds more than 1 MiB"},
			tc{[]string{"cluster", "deps", "-set", p, "web"}, "-set " + p + " holds more than 1 MiB"},
			tc{[]string{"deps", "simulate", "-f", p}, "-f " + p + " holds more than 1 MiB"},
		)
	}
	cases = append(cases, tc{[]string{"fmt", bigHCL}, "the file " + bigHCL + " holds more than 1 MiB"})
	if runtime.GOOS == "linux" {
		cases = append(cases,
			tc{[]string{"placement", "simulate", "-f", "/dev/zero"}, "the snapshot -f /dev/zero holds more than 64 MiB"},
			tc{[]string{"apply", "/dev/zero"}, "the plan file /dev/zero holds more than 64 MiB"})
	}
	for _, c := range cases {
		_, errOut, code := grove(t, c.args...)
		if code == 0 || !strings.Contains(errOut, c.want) {
			t.Errorf("grove %v: exit %d, stderr %q; want an error saying %q", c.args, code, errOut, c.want)
		}
	}

	// Standard input is bounded as a file is.
	var out, errb bytes.Buffer
	stdin := strings.NewReader("type: x\n#" + strings.Repeat("y", maxInputBytes) + "\n")
	code := Run(context.Background(), &Env{Stdin: stdin, Stdout: &out, Stderr: &errb}, []string{"profile", "create", "-spec-file", "-", "px"})
	if want := "-spec-file standard input holds more than 1 MiB"; code == 0 || !strings.Contains(errb.String(), want) {
		t.Errorf("a spec on stdin over the limit: exit %d, stderr %q; want %q", code, errb.String(), want)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("files over the limit still sent %d requests", n)
	}
}
