package vsphere

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/vmware/govmomi"
	"github.com/vmware/govmomi/fault"
	vsession "github.com/vmware/govmomi/session"
	"github.com/vmware/govmomi/session/keepalive"
	"github.com/vmware/govmomi/vim25"
	"github.com/vmware/govmomi/vim25/methods"
	"github.com/vmware/govmomi/vim25/soap"
	"github.com/vmware/govmomi/vim25/types"

	"github.com/grovehq/grove/plugins/sdk"
)

// session is one logged-in client, shared by every call for the same
// vCenter and user.
type session struct {
	c *govmomi.Client
}

func (s *session) vim() *vim25.Client { return s.c.Client }

// EnvNames are the agent's environment variables the driver reads for what
// a profile leaves out: govc's names and the Terraform vSphere provider's,
// which vSphere users already keep. The plugin host passes exactly these
// (and the other declared ones) to the built-in plugin.
func EnvNames() []string {
	return []string{"GOVC_URL", "GOVC_USERNAME", "GOVC_PASSWORD", "GOVC_INSECURE", "GOVC_TLS_THUMBPRINT",
		"GOVC_DATACENTER", "GOVC_RESOURCE_POOL", "GOVC_DATASTORE",
		"VSPHERE_SERVER", "VSPHERE_USER", "VSPHERE_PASSWORD", "VSPHERE_ALLOW_UNVERIFIED_SSL", "VSPHERE_DATACENTER"}
}

// ConfigKeys are the keys of the built-in plugin's config (the agent
// config's plugin "builtin" block) the driver reads: the vCenter and the
// defaults a profile leaves out. They come before the environment's
// variables and after the profile's own properties.
func ConfigKeys() []string {
	return []string{"vsphere_url", "vsphere_username", "vsphere_password", "vsphere_insecure", "vsphere_thumbprint",
		"vsphere_datacenter", "vsphere_datastore", "vsphere_resource_pool"}
}

// defaults are the plugin config's settings (GROVE_PLUGIN_CONFIG), then
// the environment's variables.
type defaults struct{ cfg map[string]string }

// pluginDefaults reads the plugin config the plugin host passes in
// GROVE_PLUGIN_CONFIG; settings other than strings are ignored (the
// agent's config map holds strings).
func pluginDefaults() defaults {
	var raw map[string]any
	_ = json.Unmarshal([]byte(os.Getenv("GROVE_PLUGIN_CONFIG")), &raw)
	cfg := map[string]string{}
	for _, k := range ConfigKeys() {
		if v, ok := raw[k].(string); ok && v != "" {
			cfg[k] = v
		}
	}
	return defaults{cfg: cfg}
}

// get returns the setting key of the plugin config, else the first of the
// environment variables that is set.
func (df defaults) get(key string, envNames ...string) string {
	if v := df.cfg[key]; v != "" {
		return v
	}
	for _, n := range envNames {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// endpoint is a connection with the environment's defaults filled in.
type endpoint struct {
	u          *url.URL
	user, pass string
	insecure   bool
	thumbprint string
}

func (e endpoint) key() string {
	return strings.Join([]string{e.u.Scheme, e.u.Host, e.u.Path, e.user, e.pass, strconv.FormatBool(e.insecure), e.thumbprint}, "\x00")
}

// resolveEndpoint fills a profile's connection from the plugin config,
// then from GOVC_* (govc's) and VSPHERE_* (Terraform's vSphere provider's)
// variables.
func (df defaults) resolveEndpoint(c Connection) (endpoint, error) {
	raw := c.URL
	if raw == "" {
		raw = df.get("vsphere_url", "GOVC_URL", "VSPHERE_SERVER")
	}
	if raw == "" {
		return endpoint{}, fmt.Errorf("no vCenter to connect to: set connection.url in the profile, vsphere_url in the agent config's plugin \"builtin\" block, " +
			"or GOVC_URL (or VSPHERE_SERVER) in the agent's environment")
	}
	if !strings.Contains(raw, "://") {
		raw = "https://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return endpoint{}, fmt.Errorf("connection.url %q: %w", redact(raw), err)
	}
	if u.Path == "" || u.Path == "/" {
		u.Path = "/sdk"
	}
	e := endpoint{u: u, thumbprint: c.Thumbprint}
	if u.User != nil {
		e.user = u.User.Username()
		e.pass, _ = u.User.Password()
		u.User = nil
	}
	if c.Username != "" {
		e.user = c.Username
	} else if e.user == "" {
		e.user = df.get("vsphere_username", "GOVC_USERNAME", "VSPHERE_USER")
	}
	if c.Password != "" {
		e.pass = c.Password
	} else if e.pass == "" {
		e.pass = df.get("vsphere_password", "GOVC_PASSWORD", "VSPHERE_PASSWORD")
	}
	if c.Insecure != nil {
		e.insecure = *c.Insecure
	} else if v := df.get("vsphere_insecure", "GOVC_INSECURE", "VSPHERE_ALLOW_UNVERIFIED_SSL"); v != "" {
		e.insecure, _ = strconv.ParseBool(v)
	}
	if e.thumbprint == "" {
		e.thumbprint = df.get("vsphere_thumbprint", "GOVC_TLS_THUMBPRINT")
	}
	return e, nil
}

// redact drops the password from a URL for messages.
func redact(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		u.User = url.User(u.User.Username())
		return u.String()
	}
	return raw
}

// session returns a logged-in client for the connection, logging in once
// per vCenter and user. A keep-alive holds the session open between calls.
func (d *Driver) session(ctx context.Context, c Connection) (*session, error) {
	e, err := d.defaults.resolveEndpoint(c)
	if err != nil {
		return nil, err
	}
	k := e.key()
	d.mu.Lock()
	s, ok := d.sessions[k]
	d.mu.Unlock()
	if ok {
		return s, nil
	}
	sc := soap.NewClient(e.u, e.insecure)
	if e.thumbprint != "" {
		sc.SetThumbprint(e.u.Host, e.thumbprint)
	}
	vc, err := vim25.NewClient(ctx, sc)
	if err != nil {
		return nil, connError(e, err)
	}
	// The keep-alive holds an idle session open; relogin logs in again
	// when vCenter dropped it anyway (expired, terminated, restarted).
	rl := &relogin{rt: keepalive.NewHandlerSOAP(sc, 5*time.Minute, nil), sm: *vc.ServiceContent.SessionManager, user: e.user, pass: e.pass}
	vc.RoundTripper = readRetry{rl}
	gc := &govmomi.Client{Client: vc, SessionManager: vsession.NewManager(vc)}
	if err := rl.login(ctx, 0); err != nil {
		return nil, connError(e, err)
	}
	s = &session{c: gc}
	d.mu.Lock()
	defer d.mu.Unlock()
	if prev, ok := d.sessions[k]; ok {
		_ = gc.Logout(context.WithoutCancel(ctx))
		return prev, nil
	}
	d.sessions[k] = s
	return s, nil
}

// relogin is the session's round tripper: a call vCenter refuses with
// NotAuthenticated (the session expired, an administrator terminated it,
// vCenter restarted) logs in again with the same credentials and is sent
// once more. vCenter refuses such a call before running it, so sending it
// again cannot run it twice.
type relogin struct {
	rt         soap.RoundTripper
	sm         types.ManagedObjectReference
	user, pass string
	mu         sync.Mutex
	// logins counts logins, so that calls refused together log in once.
	logins uint64
}

func (r *relogin) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	switch req.(type) {
	case *methods.LoginBody, *methods.LogoutBody:
		return r.rt.RoundTrip(ctx, req, res)
	}
	r.mu.Lock()
	seen := r.logins
	r.mu.Unlock()
	err := r.rt.RoundTrip(ctx, req, res)
	if !refused(err, res) {
		return err
	}
	if err == nil {
		err = errors.New("vCenter answered NotAuthenticated")
	}
	if lerr := r.login(ctx, seen); lerr != nil {
		return fmt.Errorf("%w (logging in again failed: %v)", err, lerr)
	}
	// The refused answer was decoded into res: clear it for the next one.
	if v := reflect.ValueOf(res); v.Kind() == reflect.Pointer && !v.IsNil() {
		v.Elem().Set(reflect.Zero(v.Elem().Type()))
	}
	return r.rt.RoundTrip(ctx, req, res)
}

// readRetry sends a lookup once more when its connection failed in a way
// that says nothing ran wrong on vCenter's side: a 502 from the proxy in
// front of it (govmomi marks that answer temporary) or a connection cut
// before the answer. Only lookups are sent again: they change nothing, while
// a call that changes something may have run before its answer was lost,
// and the caller's own retry (a node create adopts its VM) decides that.
type readRetry struct{ rt soap.RoundTripper }

func (r readRetry) RoundTrip(ctx context.Context, req, res soap.HasFault) error {
	err := r.rt.RoundTrip(ctx, req, res)
	switch req.(type) {
	case *methods.FindChildBody, *methods.FindByInventoryPathBody, *methods.RetrievePropertiesBody, *methods.RetrievePropertiesExBody:
	default:
		return err
	}
	for attempt := 1; attempt < 3 && err != nil && ctx.Err() == nil && cutShort(err); attempt++ {
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(attempt) * 100 * time.Millisecond):
		}
		err = r.rt.RoundTrip(ctx, req, res)
	}
	return err
}

// cutShort says a call failed in transport, not on vCenter's decision.
func cutShort(err error) bool {
	return vim25.IsTemporaryNetworkError(err) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// refused says vCenter refused a call for want of a session: a
// NotAuthenticated fault, or (for property reads, which some vCenters and
// the simulator answer without a session) properties missing with it.
func refused(err error, res soap.HasFault) bool {
	if err != nil {
		return fault.Is(err, &types.NotAuthenticated{})
	}
	var contents []types.ObjectContent
	switch b := res.(type) {
	case *methods.RetrievePropertiesExBody:
		if b.Res != nil && b.Res.Returnval != nil {
			contents = b.Res.Returnval.Objects
		}
	case *methods.RetrievePropertiesBody:
		if b.Res != nil {
			contents = b.Res.Returnval
		}
	}
	for _, oc := range contents {
		for _, m := range oc.MissingSet {
			if _, ok := m.Fault.Fault.(*types.NotAuthenticated); ok {
				return true
			}
		}
	}
	return false
}

// login logs in unless another call has logged in since the caller saw
// seen logins.
func (r *relogin) login(ctx context.Context, seen uint64) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.logins != seen {
		return nil
	}
	if _, err := methods.Login(ctx, r.rt, &types.Login{This: r.sm, UserName: r.user, Password: r.pass}); err != nil {
		return err
	}
	r.logins++
	return nil
}

func connError(e endpoint, err error) error {
	msg := err.Error()
	if strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host") || strings.Contains(msg, "timeout") {
		return sdk.Retryable(fmt.Errorf("vCenter %s does not answer: %s", e.u.Host, msg))
	}
	return fmt.Errorf("connect to vCenter %s as %q: %s", e.u.Host, e.user, msg)
}
