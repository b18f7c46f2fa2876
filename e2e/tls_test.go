package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/tlstest"
)

// TestCLITLS runs an agent with a tls block and drives it with the grove
// CLI: resource commands and the HCL commands verify its certificate with
// -ca-cert or GROVE_CACERT, and refuse it, saying which flag to use, when
// they do not know its CA.
func TestCLITLS(t *testing.T) {
	pki := tlstest.Issue(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "agent.hcl")
	os.WriteFile(cfg, []byte("tls {\n  cert_file = \""+pki.ServerCert+"\"\n  key_file = \""+pki.ServerKey+"\"\n}\n"), 0o600)
	a := startAgent(t, dir, "-config", cfg)
	if !strings.HasPrefix(a.addr, "https://127.0.0.1:") {
		t.Fatalf("agent address %q; want https://", a.addr)
	}
	a.client = api.New(api.Options{Address: a.addr, TLS: api.TLSOptions{CACert: pki.CA}})
	t.Cleanup(func() { killProcessesOf("tlsweb") })
	spec := filepath.Join(t.TempDir(), "web.yaml")
	os.WriteFile(spec, []byte("type: local.process\nversion: \"1.0\"\nproperties:\n  command: [\"/bin/sleep\", \"1000\"]\n"), 0o644)

	out, errOut, code := a.grove("profile", "create", "-ca-cert", pki.CA, "-spec-file", spec, "web")
	if code != 0 || !strings.Contains(out, "Profile web created") {
		t.Fatalf("profile create over HTTPS: %d %s %s", code, out, errOut)
	}
	out, errOut, code = a.grove("profile", "list")
	if code != 1 || !strings.Contains(errOut, "signed by an authority this client does not trust: pass the CA that signed it with -ca-cert FILE (or GROVE_CACERT") {
		t.Fatalf("profile list without the CA: %d %s %s", code, out, errOut)
	}
	out, errOut, code = a.grove("profile", "list", "-tls-skip-verify")
	if code != 0 || !strings.Contains(out, "web") {
		t.Fatalf("profile list -tls-skip-verify: %d %s %s", code, out, errOut)
	}

	def := filepath.Join(t.TempDir(), "tlsweb")
	os.MkdirAll(def, 0o755)
	os.WriteFile(filepath.Join(def, "main.hcl"), []byte(`profile "tlsweb" {
  type    = "local.process"
  version = "1.0"
  properties {
    command = ["/bin/sleep", "1000"]
  }
}

cluster "tlsweb" {
  profile          = profile.tlsweb
  desired_capacity = 1
}
`), 0o644)
	// Without the CA, validate still checks what it can offline, and says
	// why the agent did not answer.
	out, errOut, code = a.grove("validate", def)
	if code != 0 || !strings.Contains(errOut, "no agent answered") || !strings.Contains(errOut, "-ca-cert FILE") {
		t.Fatalf("validate without the CA: %d %s %s", code, out, errOut)
	}
	out, errOut, code = a.grove("plan", def)
	if code != 1 || !strings.Contains(errOut, "-ca-cert FILE") {
		t.Fatalf("plan without the CA: %d %s %s", code, out, errOut)
	}
	t.Setenv("GROVE_CACERT", pki.CA) // the grove processes inherit it
	out, errOut, code = a.grove("validate", def)
	if code != 0 || strings.Contains(errOut, "no agent answered") {
		t.Fatalf("validate with GROVE_CACERT: %d %s %s", code, out, errOut)
	}
	out, errOut, code = a.grove("apply", "-auto-approve", def)
	if code != 0 || !strings.Contains(out, "Apply complete! Resources: 2 added") {
		t.Fatalf("apply with GROVE_CACERT: %d %s %s", code, out, errOut)
	}
	if cl := a.cluster("tlsweb"); cl.Status != "ACTIVE" || len(cl.Nodes) != 1 {
		t.Fatalf("cluster after apply: %+v", cl)
	}
	out, errOut, code = a.grove("destroy", "-auto-approve", def)
	if code != 0 || !strings.Contains(out, "2 destroyed") {
		t.Fatalf("destroy with GROVE_CACERT: %d %s %s", code, out, errOut)
	}
}
