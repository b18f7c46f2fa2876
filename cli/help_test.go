package cli

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/grovehq/grove/internal/testbin"
)

// TestHelpAtEveryLevel: each way of asking for help prints a description,
// the usage with its arguments and, for a command, its flags with their
// help, on stdout with exit 0.
func TestHelpAtEveryLevel(t *testing.T) {
	cases := []struct {
		args []string
		want []string
	}{
		{[]string{"-h"}, []string{"Usage: grove [-version]", "cluster      Manage clusters", "-address string", "agent address"}},
		{[]string{"--help"}, []string{"Usage: grove [-version]", "quickstart   Bring up"}},
		{[]string{"help"}, []string{"Usage: grove [-version]", "-tls-skip-verify"}},
		{[]string{"help", "cluster"}, []string{"Usage: grove cluster <subcommand>", "Manage clusters", "Subcommands:", "create            Create a cluster of nodes from a profile."}},
		{[]string{"cluster", "-h"}, []string{"Usage: grove cluster <subcommand>", "resize            Resize a cluster"}},
		{[]string{"cluster", "create", "-h"}, []string{"Usage: grove cluster create -profile PROFILE [options] NAME", "Create a cluster of nodes from a profile.",
			"Options:", "  -profile string\n      profile id or name (required)", "  -max-size int\n      maximum size (-1 unbounded) (default -1)", "  -wait\n", "Agent options: -address"}},
		{[]string{"help", "event", "list"}, []string{"Usage: grove event list [options]", "-cluster string\n      only those of this cluster: its name, id or short id", "-object-name"}},
		{[]string{"validate", "--help"}, []string{"Usage: grove validate [options] [PATH]", "-var value", "-var-file value"}},
	}
	for _, tc := range cases {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			out, errOut, code := grove(t, tc.args...)
			if code != 0 {
				t.Fatalf("exit %d; stderr %q", code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("help does not say %q:\n%s", w, out)
				}
			}
		})
	}
	// Help lists no deprecated spelling.
	out, _, _ := grove(t, "event", "list", "-h")
	if strings.Contains(out, "-oname") || strings.Contains(out, "cluster_id") {
		t.Errorf("event list -h lists a deprecated flag:\n%s", out)
	}
}

// TestEveryCommandDeclaresItsFlags: help renders flags by running a
// command in help mode; every command with flags must hand its flag set
// over there (and so stops before doing anything).
func TestEveryCommandDeclaresItsFlags(t *testing.T) {
	for _, e := range newTable(commands()).entries {
		if e.noFlags {
			continue
		}
		if fs := e.flags(); fs == nil || fs.Lookup("json") == nil {
			t.Errorf("grove %s does not declare its flags through flagSet", e.name)
		}
	}
}

// TestVersion: -version, --version and version print the same line.
func TestVersion(t *testing.T) {
	for _, args := range [][]string{{"-version"}, {"--version"}, {"-v"}, {"version"}} {
		out, _, code := grove(t, args...)
		if code != 0 || out != "grove "+version()+"\n" {
			t.Errorf("grove %v: exit %d, %q; want %q", args, code, out, "grove "+version()+"\n")
		}
	}
}

// TestVersionStampedAtBuild builds grove with the GNUmakefile's -X flag and
// reads the stamped version back.
func TestVersionStampedAtBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the grove binary")
	}
	mk, err := os.ReadFile("../GNUmakefile")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(mk), "-X github.com/grovehq/grove/cli.Version=$(VERSION)") || !strings.Contains(string(mk), "git describe") {
		t.Fatal("the GNUmakefile's build does not stamp cli.Version from git describe")
	}
	bin := filepath.Join(t.TempDir(), "grove")
	if err := testbin.Build(bin, "..", "GOFLAGS=-ldflags=-X=github.com/grovehq/grove/cli.Version=v9.8.7-test"); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, "-version").Output()
	if err != nil || string(out) != "grove v9.8.7-test\n" {
		t.Fatalf("grove -version: %v %q", err, out)
	}
}

// TestUnknownCommandSuggests: a typo names the closest command, exit 2.
func TestUnknownCommandSuggests(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"clustr", "list"}, `Error: "clustr" is not a grove command (did you mean "cluster"?)`},
		{[]string{"vaildate"}, `(did you mean "validate"?)`},
		{[]string{"cluster", "craete", "web"}, `"craete" is not a cluster subcommand (did you mean "create"?)`},
		{[]string{"node", "lst"}, `(did you mean "list"?)`},
		// A bad flag names the command as it is typed, kebab-case.
		{[]string{"cluster", "scale-in", "-bogus", "x"}, "run `grove cluster scale-in -h` for its flags"},
	}
	for _, tc := range cases {
		_, errOut, code := grove(t, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("grove %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errOut, tc.want)
		}
	}
	if _, errOut, code := grove(t, "zzzzzz"); code != 2 || strings.Contains(errOut, "did you mean") {
		t.Errorf("grove zzzzzz: exit %d, %q: nothing is close, nothing is suggested", code, errOut)
	}
}

// fakeAgent answers GET /v1/clusters/web and records the list queries.
type fakeAgent struct {
	mu      sync.Mutex
	queries map[string]string // path -> raw query
}

func startFakeAgent(t *testing.T) *fakeAgent {
	t.Helper()
	f := &fakeAgent{queries: map[string]string{}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/clusters/web", "/v1/clusters/6f1c2a4e":
			w.Write([]byte(`{"cluster":{"id":"6f1c2a4e-0000-4000-8000-00000000000c","name":"web"}}`))
		case "/v1/nodes/web-1":
			w.Write([]byte(`{"node":{"id":"7e0ea3f3-0000-4000-8000-00000000000e","name":"web-1"}}`))
		case "/v1/nodes", "/v1/events", "/v1/actions":
			f.mu.Lock()
			f.queries[r.URL.Path] = r.URL.RawQuery
			f.mu.Unlock()
			key := strings.TrimPrefix(r.URL.Path, "/v1/")
			w.Write([]byte(`{"` + key + `":[]}`))
		default:
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"code":404,"error":{"code":404,"type":"ResourceNotFound","message":"The cluster 'ghost' could not be found."}}`))
		}
	}))
	t.Cleanup(srv.Close)
	t.Setenv("GROVE_ADDR", srv.URL)
	t.Setenv("GROVE_TOKEN", "")
	return f
}

func (f *fakeAgent) query(path string) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.queries[path]
}

// TestClusterFiltersTakeNames: -cluster on node, event and action list
// takes a name or short id and queries by the cluster's id; the old
// spellings still work, with a deprecation note on stderr.
func TestClusterFiltersTakeNames(t *testing.T) {
	f := startFakeAgent(t)
	const id = "6f1c2a4e-0000-4000-8000-00000000000c"
	// Actions and events come newest first, a page of 20 (and one more
	// to tell whether another page exists).
	const events, actions = "&limit=21&sort=timestamp%3Adesc", "&limit=21&sort=created_at%3Adesc"
	cases := []struct {
		args      []string
		path      string
		wantQuery string
		warning   string
	}{
		{[]string{"event", "list", "-cluster", "web"}, "/v1/events", "cluster_id=" + id + events, ""},
		{[]string{"action", "list", "-cluster", "6f1c2a4e"}, "/v1/actions", "cluster_id=" + id + actions, ""},
		{[]string{"node", "list", "-cluster", "web"}, "/v1/nodes", "cluster_id=" + id + "&sort=index", ""},
		{[]string{"node", "list", "-cluster_id", "web"}, "/v1/nodes", "cluster_id=" + id + "&sort=index", "Warning: -cluster_id is deprecated and will be removed in the next release; use -cluster.\n"},
		{[]string{"event", "list", "-cluster_id", "web", "-oname", "web-1"}, "/v1/events", "cluster_id=" + id + "&limit=21&oid=7e0ea3f3-0000-4000-8000-00000000000e&sort=timestamp%3Adesc", "Warning: -oname is deprecated and will be removed in the next release; use -object-name."},
		{[]string{"event", "list", "-object-type", "NODE", "-object-id", "n1"}, "/v1/events", "limit=21&oid=n1&otype=NODE&sort=timestamp%3Adesc", ""},
	}
	for _, tc := range cases {
		out, errOut, code := grove(t, tc.args...)
		if code != 0 {
			t.Fatalf("grove %v: exit %d %q %q", tc.args, code, out, errOut)
		}
		if got := f.query(tc.path); got != tc.wantQuery {
			t.Errorf("grove %v queried %s?%s; want ?%s", tc.args, tc.path, got, tc.wantQuery)
		}
		if tc.warning == "" && errOut != "" || !strings.Contains(errOut, tc.warning) {
			t.Errorf("grove %v: stderr %q; want %q", tc.args, errOut, tc.warning)
		}
	}
	_, errOut, code := grove(t, "event", "list", "-object-name", "ghost")
	if code != 1 || !strings.Contains(errOut, `Error: no node or cluster is named "ghost"`) {
		t.Errorf("event list -object-name ghost: exit %d %q", code, errOut)
	}
	_, errOut, code = grove(t, "event", "list", "-cluster", "ghost")
	if code != 1 || !strings.Contains(errOut, "The cluster 'ghost' could not be found.") {
		t.Errorf("event list -cluster ghost: exit %d %q; want the cluster's not-found error", code, errOut)
	}
}

// TestJSONErrors: with -json an error is the API's error object on stdout
// and the exit code is still non-zero.
func TestJSONErrors(t *testing.T) {
	startFakeAgent(t)
	cases := []struct {
		args     []string
		code     int
		errCode  float64
		typ, msg string
	}{
		{[]string{"cluster", "show", "-json", "ghost"}, 1, 404, "ResourceNotFound", "The cluster 'ghost' could not be found."},
		{[]string{"cluster", "create", "-json", "web"}, 2, 2, "UsageError", "usage: grove cluster create"},
		{[]string{"cluster", "list", "-json", "-bogus"}, 2, 2, "UsageError", "flag provided but not defined: -bogus"},
		{[]string{"event", "list", "-json=true", "-cluster", "ghost"}, 1, 404, "ResourceNotFound", "could not be found"},
	}
	for _, tc := range cases {
		out, errOut, code := grove(t, tc.args...)
		var body struct {
			Error struct {
				Code    float64 `json:"code"`
				Type    string  `json:"type"`
				Message string  `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(out), &body); err != nil {
			t.Errorf("grove %v: stdout is not JSON (%v): %q (stderr %q)", tc.args, err, out, errOut)
			continue
		}
		if code != tc.code || body.Error.Code != tc.errCode || body.Error.Type != tc.typ || !strings.Contains(body.Error.Message, tc.msg) {
			t.Errorf("grove %v: exit %d, %+v; want exit %d, code %v, type %s, message with %q", tc.args, code, body.Error, tc.code, tc.errCode, tc.typ, tc.msg)
		}
	}
	// Without -json the same error is a sentence on stderr.
	out, errOut, code := grove(t, "cluster", "show", "ghost")
	if code != 1 || out != "" || errOut != "Error: The cluster 'ghost' could not be found.\n" {
		t.Errorf("cluster show ghost: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestCLIReference keeps docs/cli.md what the commands' help says.
func TestCLIReference(t *testing.T) {
	var b bytes.Buffer
	writeReference(&b)
	path := filepath.Join("..", "docs", "cli.md")
	if os.Getenv("GROVE_UPDATE_DOCS") != "" {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	have, err := os.ReadFile(path)
	if err != nil || !bytes.Equal(have, b.Bytes()) {
		t.Fatalf("docs/cli.md is not what the commands' help says (%v); regenerate it with:\n\n  GROVE_UPDATE_DOCS=1 go test ./cli -run TestCLIReference\n", err)
	}
}

// TestAutocompleteFlags: -autocomplete-install and -autocomplete-uninstall
// reach posener/complete's installer (asked for both, it refuses before it
// touches any shell file).
func TestAutocompleteFlags(t *testing.T) {
	_, errOut, code := grove(t, "-autocomplete-install", "-autocomplete-uninstall")
	if code != 1 || !strings.Contains(errOut, "Either the autocomplete install or uninstall flag may be specified, but not both.") {
		t.Errorf("exit %d, stderr %q", code, errOut)
	}
}
