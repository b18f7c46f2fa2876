package agent

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/internal/testbin"
	"github.com/grovehq/grove/internal/tlstest"
)

// TestValidateRefusesAnExposedAgent: an agent other hosts can reach needs
// TLS, dev mode stays on loopback, and each refusal says how to fix it.
func TestValidateRefusesAnExposedAgent(t *testing.T) {
	pki := tlstest.Issue(t)
	good := &TLSConfig{CertFile: pki.ServerCert, KeyFile: pki.ServerKey}
	notPEM := filepath.Join(t.TempDir(), "not.pem")
	if err := os.WriteFile(notPEM, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		bind string
		dev  bool
		tls  *TLSConfig
		want []string // nil: accepted
	}{
		{"dev on loopback", "127.0.0.1:7470", true, nil, nil},
		{"dev on the default bind", "", true, nil, nil},
		{"dev on localhost", "localhost:0", true, nil, nil},
		{"dev on IPv6 loopback", "[::1]:7470", true, nil, nil},
		{"plain HTTP on loopback", "127.0.0.1:0", false, nil, nil},
		{"TLS on every address", "0.0.0.0:7470", false, good, nil},
		{"TLS with client certificates", "0.0.0.0:7470", false, &TLSConfig{CertFile: pki.ServerCert, KeyFile: pki.ServerKey, ClientCAFile: pki.CA}, nil},
		{"plain HTTP on every address", "0.0.0.0:7470", false, nil, []string{`bind "0.0.0.0:7470" is not a loopback address`, "must serve HTTPS", "tls { cert_file", "key_file", "or bind 127.0.0.1"}},
		{"plain HTTP on an empty host", ":7470", false, nil, []string{`bind ":7470" is not a loopback address`, "tls { cert_file"}},
		{"plain HTTP on a host name", "grove.example.com:7470", false, nil, []string{"is not a loopback address", "tls { cert_file"}},
		{"dev on every address", "0.0.0.0:7470", true, nil, []string{"-dev trusts callers without a token", "bind 127.0.0.1", "without -dev"}},
		{"dev with TLS on every address", "[::]:7470", true, good, []string{"-dev trusts callers without a token"}},
		{"tls without key_file", "127.0.0.1:0", false, &TLSConfig{CertFile: pki.ServerCert}, []string{"needs both cert_file and key_file"}},
		{"tls cert_file missing", "0.0.0.0:7470", false, &TLSConfig{CertFile: filepath.Join(t.TempDir(), "none.pem"), KeyFile: pki.ServerKey}, []string{"tls.cert_file", "no such file"}},
		{"tls key of another certificate", "0.0.0.0:7470", false, &TLSConfig{CertFile: pki.ServerCert, KeyFile: pki.ClientKey}, []string{"tls.cert_file", "private key does not match"}},
		{"client_ca_file not PEM", "0.0.0.0:7470", false, &TLSConfig{CertFile: pki.ServerCert, KeyFile: pki.ServerKey, ClientCAFile: notPEM}, []string{"tls.client_ca_file", "holds no PEM certificate"}},
		{"bind without a port", "127.0.0.1", false, nil, []string{"bind must be ADDRESS:PORT"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := &Config{Bind: tc.bind, DataDir: t.TempDir(), Dev: tc.dev, TLS: tc.tls}
			err := cfg.Validate()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("Validate: %v; want accepted", err)
				}
				return
			}
			if err == nil {
				t.Fatal("Validate accepted; want refused")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
		})
	}
}

// TestConfigFileTLSBlock: the tls block of an agent config file reaches the
// config.
func TestConfigFileTLSBlock(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agent.hcl")
	src := "bind = \"0.0.0.0:7470\"\ntls {\n  cert_file = \"s.pem\"\n  key_file = \"s-key.pem\"\n  client_ca_file = \"ca.pem\"\n}\n"
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := LoadConfig(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.TLS == nil || *c.TLS != (TLSConfig{CertFile: "s.pem", KeyFile: "s-key.pem", ClientCAFile: "ca.pem"}) {
		t.Fatalf("tls block read as %+v", c.TLS)
	}
}

// TestAgentServesHTTPS starts a real agent with a tls block that requires
// client certificates, and talks to it with the Go client: it answers only
// a client that trusts its CA and presents a certificate, and each mistake
// gets a sentence saying what to change.
func TestAgentServesHTTPS(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "grove")
	if err := testbin.Build(bin, "../../"); err != nil {
		t.Fatal(err)
	}
	pki := tlstest.Issue(t)
	cfg := &Config{Bind: "127.0.0.1:0", DataDir: filepath.Join(dir, "data"), Builtin: []string{bin, "plugin", "serve"},
		TLS: &TLSConfig{CertFile: pki.ServerCert, KeyFile: pki.ServerKey, ClientCAFile: pki.CA}}
	a, err := Start(context.Background(), cfg, "test", hclog.NewNullLogger())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	if !strings.HasPrefix(a.Addr, "https://127.0.0.1:") {
		t.Fatalf("agent address %q, want https://127.0.0.1:port", a.Addr)
	}
	withCert := api.TLSOptions{CACert: pki.CA, ClientCert: pki.ClientCert, ClientKey: pki.ClientKey}
	cases := []struct {
		name    string
		address string
		tls     api.TLSOptions
		want    string // "" for an answer
	}{
		{"trusted CA and a client certificate", a.Addr, withCert, ""},
		{"skip-verify and a client certificate", a.Addr, api.TLSOptions{SkipVerify: true, ClientCert: pki.ClientCert, ClientKey: pki.ClientKey}, ""},
		{"system CAs", a.Addr, api.TLSOptions{ClientCert: pki.ClientCert, ClientKey: pki.ClientKey}, "pass the CA that signed it with -ca-cert FILE (or GROVE_CACERT"},
		{"another CA", a.Addr, api.TLSOptions{CACert: pki.OtherCA, ClientCert: pki.ClientCert, ClientKey: pki.ClientKey}, "signed by an authority this client does not trust"},
		{"no client certificate", a.Addr, api.TLSOptions{CACert: pki.CA}, "accepts only clients with a certificate signed by its tls.client_ca_file: pass one with -client-cert FILE"},
		{"localhost is named by the certificate", strings.Replace(a.Addr, "127.0.0.1", "localhost", 1), withCert, ""},
		{"plain HTTP", strings.Replace(a.Addr, "https://", "http://", 1), withCert, "serves HTTPS: use an https:// address"},
		{"a CA file that is missing", a.Addr, api.TLSOptions{CACert: filepath.Join(dir, "none.pem")}, "read the CA certificate (-ca-cert or GROVE_CACERT)"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("GROVE_CACERT", "")
			c := api.New(api.Options{Address: tc.address, TLS: tc.tls})
			// GET / needs no token and answers 300 with the API versions,
			// as Senlin's does.
			r, err := c.Do(context.Background(), http.MethodGet, "/", nil, nil, nil)
			if tc.want == "" {
				if r == nil || r.Status != http.StatusMultipleChoices || !strings.Contains(string(r.Body), `"versions"`) {
					t.Fatalf("GET /: %v; want the versions", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("GET /: error %v; want one saying %q", err, tc.want)
			}
		})
	}
}
