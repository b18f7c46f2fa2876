package api

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// DefaultAddress is where `grove agent -dev` listens.
const DefaultAddress = "http://127.0.0.1:7470"

// Client talks to a Grove agent.
type Client struct {
	Address string
	// Token is sent as X-Auth-Token on every request.
	Token string
	HTTP  *http.Client
	// err is a TLS setting that could not be loaded; every request fails
	// with it rather than reaching the agent without it.
	err error
}

// Options says how to reach an agent. Empty fields take their defaults from
// the environment, as the CLI documents them.
type Options struct {
	// Address is "host:port", "http://host:port" or "https://host:port";
	// default $GROVE_ADDR, then DefaultAddress.
	Address string
	// Token is sent as X-Auth-Token; default $GROVE_TOKEN.
	Token string
	// TLS says how the agent's certificate is checked.
	TLS TLSOptions
}

// TLSOptions says how a client checks an HTTPS agent's certificate and which
// certificate it presents when the agent asks for one (tls.client_ca_file).
type TLSOptions struct {
	// CACert is a PEM file of the CAs that sign the agent's certificate,
	// trusted instead of the system's; default $GROVE_CACERT.
	CACert string
	// ClientCert and ClientKey are this client's certificate and key (PEM);
	// default $GROVE_CLIENT_CERT and $GROVE_CLIENT_KEY.
	ClientCert string
	ClientKey  string
	// SkipVerify accepts any certificate: anyone between the client and the
	// agent can then read and change the traffic, token included. For
	// development only.
	SkipVerify bool
}

// NewClient returns a client for address, or $GROVE_ADDR, or DefaultAddress,
// with the token and TLS settings of the environment.
func NewClient(address string) *Client { return New(Options{Address: address}) }

// New returns a client with opts. A TLS file that cannot be loaded does not
// stop New: Err reports it, and every request fails with it.
func New(opts Options) *Client {
	address := opts.Address
	if address == "" {
		address = os.Getenv("GROVE_ADDR")
	}
	if address == "" {
		address = DefaultAddress
	}
	if !strings.Contains(address, "://") {
		address = "http://" + address
	}
	if opts.Token == "" {
		opts.Token = os.Getenv("GROVE_TOKEN")
	}
	t := opts.TLS
	for _, f := range []struct {
		v   *string
		env string
	}{{&t.CACert, "GROVE_CACERT"}, {&t.ClientCert, "GROVE_CLIENT_CERT"}, {&t.ClientKey, "GROVE_CLIENT_KEY"}} {
		if *f.v == "" {
			*f.v = os.Getenv(f.env)
		}
	}
	c := &Client{Address: strings.TrimRight(address, "/"), Token: opts.Token}
	tc, err := t.config()
	c.err = err
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = tc
	// Go's default keeps two idle connections per host: a program using
	// one client from many goroutines (the Terraform provider applying
	// resources in parallel, a load test) would open a new connection for
	// most requests.
	tr.MaxIdleConnsPerHost = 32
	c.HTTP = &http.Client{Timeout: 5 * time.Minute, Transport: tr}
	return c
}

// Err is the reason the client's TLS settings could not be loaded, or nil.
func (c *Client) Err() error { return c.err }

func (t TLSOptions) config() (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, InsecureSkipVerify: t.SkipVerify} //nolint:gosec // asked for, development only
	if t.CACert != "" {
		pem, err := os.ReadFile(t.CACert)
		if err != nil {
			return cfg, fmt.Errorf("read the CA certificate (-ca-cert or GROVE_CACERT): %w", err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return cfg, fmt.Errorf("the CA certificate file %s (-ca-cert or GROVE_CACERT) holds no PEM certificate", t.CACert)
		}
		cfg.RootCAs = pool
	}
	if (t.ClientCert == "") != (t.ClientKey == "") {
		return cfg, fmt.Errorf("a client certificate needs both its certificate and its key (-client-cert and -client-key, or GROVE_CLIENT_CERT and GROVE_CLIENT_KEY)")
	}
	if t.ClientCert != "" {
		cert, err := tls.LoadX509KeyPair(t.ClientCert, t.ClientKey)
		if err != nil {
			return cfg, fmt.Errorf("load the client certificate %s and key %s: %w", t.ClientCert, t.ClientKey, err)
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

// reachError turns a failed round trip into a sentence that says what to
// change: the CA to trust, the scheme, or where the agent is.
func (c *Client) reachError(err error) error {
	var unknown x509.UnknownAuthorityError
	var host x509.HostnameError
	var rec tls.RecordHeaderError
	switch {
	case errors.As(err, &unknown):
		return fmt.Errorf("The agent at %s presented a certificate signed by an authority this client does not trust: "+
			"pass the CA that signed it with -ca-cert FILE (or GROVE_CACERT; ca_cert in the Terraform provider): %w", c.Address, err)
	case errors.As(err, &host):
		return fmt.Errorf("The certificate of the agent at %s is not valid for that address: "+
			"use an address the certificate names, or reissue it with this one: %w", c.Address, err)
	case strings.Contains(err.Error(), "tls: certificate required") || strings.Contains(err.Error(), "tls: bad certificate"):
		// The server's alert reaches the client only as text.
		return fmt.Errorf("The agent at %s accepts only clients with a certificate signed by its tls.client_ca_file: "+
			"pass one with -client-cert FILE and -client-key FILE (or GROVE_CLIENT_CERT and GROVE_CLIENT_KEY): %w", c.Address, err)
	case errors.As(err, &rec):
		return fmt.Errorf("The agent at %s does not speak HTTPS: use an http:// address, or configure the agent's tls block: %w", c.Address, err)
	}
	return fmt.Errorf("Cannot reach the Grove agent at %s: %w. Is `grove agent` running? Set -address or GROVE_ADDR to point elsewhere.", c.Address, err)
}

// Response is a raw answer: status, Location header and body.
type Response struct {
	Status   int
	Location string
	Body     []byte
}

// ActionID returns the action id of an asynchronous answer, from the
// Location header or an {"action": id} body.
func (r *Response) ActionID() string {
	if i := strings.LastIndex(r.Location, "/actions/"); i >= 0 {
		return r.Location[i+len("/actions/"):]
	}
	var body struct {
		Action string `json:"action"`
	}
	_ = json.Unmarshal(r.Body, &body)
	return body.Action
}

// Do sends a request with a JSON body (nil for none) and decodes a JSON
// answer into out (nil to skip). Non-2xx answers become *Error.
func (c *Client) Do(ctx context.Context, method, path string, query url.Values, body, out any) (*Response, error) {
	if c.err != nil {
		return nil, c.err
	}
	if msg := unaddressable(path); msg != "" {
		// The agent's router cleans "." and ".." and empty segments out of
		// a path and sends the request on to what remains
		// ("/v1/clusters/." becomes the list of clusters), so the answer
		// would be another resource's.
		return nil, &Error{Status: http.StatusNotFound, Type: "NotFound", Message: msg}
	}
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, fmt.Errorf("encode request: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	u := c.Address + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json")
	req.Header.Set("OpenStack-API-Version", "clustering 1.14")
	if c.Token != "" {
		req.Header.Set("X-Auth-Token", c.Token)
	}
	resp, err := c.HTTP.Do(req)
	if err != nil {
		return nil, c.reachError(err)
	}
	defer resp.Body.Close()
	var data []byte
	if resp.StatusCode >= 300 {
		// An error's body is a sentence; what is beyond the bound is not
		// one, and is not read.
		data, err = io.ReadAll(io.LimitReader(resp.Body, maxErrorBody))
	} else {
		data, err = io.ReadAll(resp.Body)
	}
	if err != nil {
		return nil, fmt.Errorf("read answer: %w", err)
	}
	r := &Response{Status: resp.StatusCode, Location: resp.Header.Get("Location"), Body: data}
	if resp.StatusCode >= 300 {
		retry, _ := strconv.Atoi(resp.Header.Get("Retry-After"))
		var eb ErrorBody
		if json.Unmarshal(data, &eb) == nil && eb.Error.Message != "" {
			return r, &Error{Status: resp.StatusCode, Type: eb.Error.Type, Message: eb.Error.Message, RetryAfter: retry}
		}
		// Go's HTTPS server answers plain HTTP with this one line.
		if resp.StatusCode == http.StatusBadRequest && strings.Contains(string(data), "HTTP request to an HTTPS server") {
			return r, &Error{Status: resp.StatusCode, Message: "The agent at " + c.Address + " serves HTTPS: use an https:// address."}
		}
		// Anything else did not come from a Grove agent's API: a proxy in
		// front of it, or another service at the address. Saying so beats
		// reading its status as the agent's (a proxy's 403 is not the
		// token's role).
		msg := fmt.Sprintf("The server at %s answered %s %s with HTTP %d %s but without a Grove error body; it may not be a Grove agent, or it is a proxy in front of one",
			c.Address, method, path, resp.StatusCode, http.StatusText(resp.StatusCode))
		if snippet := excerpt(data); snippet != "" {
			msg += ": " + snippet
		}
		return r, &Error{Status: resp.StatusCode, Message: msg + ".", RetryAfter: retry, Foreign: true}
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return r, fmt.Errorf("The server at %s answered %s %s with a body that is not Grove's JSON (%v); it may not be a Grove agent: %s",
				c.Address, method, path, err, excerpt(data))
		}
	}
	return r, nil
}

// maxErrorBody bounds what is read of an error answer.
const maxErrorBody = 64 << 10

// excerpt is the beginning of a body that is not Grove's, fit to quote in
// an error: at most 200 characters, with control characters (a terminal's
// escapes among them) shown as spaces.
func excerpt(body []byte) string {
	s := strings.ToValidUTF8(string(body), "?")
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > 200 {
		s = string(r[:200]) + "…"
	}
	return s
}

// unaddressable says why path cannot name what its caller meant, or "": a
// segment is ".", ".." or empty (an empty name or id was put in it). The
// documents whose paths end in a slash, / and /v1/, are not objects and
// pass.
func unaddressable(path string) string {
	path, _, _ = strings.Cut(path, "?")
	if path == "/" || path == "/v1/" {
		return ""
	}
	for i, seg := range strings.Split(path, "/") {
		switch {
		case seg == "." || seg == "..":
			return fmt.Sprintf("No object is named %q: the names \".\" and \"..\" cannot be looked up, since a URL path drops them.", seg)
		case seg == "" && i > 0:
			return "No object has an empty name or id."
		}
	}
	return ""
}

// IsNotFound reports whether err is an API 404.
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// GetAction fetches one action.
func (c *Client) GetAction(ctx context.Context, id string) (*Action, error) {
	var out struct {
		Action Action `json:"action"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/actions/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out.Action, nil
}

// WaitAction polls an action until it ends, calling progress on each change.
// A failed or cancelled action is returned with an error carrying its reason.
func (c *Client) WaitAction(ctx context.Context, id string, progress func(*Action)) (*Action, error) {
	delay := 50 * time.Millisecond
	last := ""
	for {
		a, err := c.GetAction(ctx, id)
		if err != nil {
			return nil, err
		}
		if progress != nil && a.Status+a.StatusReason != last {
			progress(a)
			last = a.Status + a.StatusReason
		}
		if a.Terminal() {
			if a.Status != "SUCCEEDED" {
				return a, fmt.Errorf("action %s %s: %s", a.Name, strings.ToLower(a.Status), a.StatusReason)
			}
			return a, nil
		}
		select {
		case <-ctx.Done():
			return a, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(delay*2, time.Second)
	}
}

// GetCluster fetches a cluster by id, name or short id.
func (c *Client) GetCluster(ctx context.Context, ident string) (*Cluster, error) {
	var out struct {
		Cluster Cluster `json:"cluster"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/clusters/"+url.PathEscape(ident), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out.Cluster, nil
}

// ClusterNodeIDs returns every node id of cl: its inlined ids, and when
// the API summarised the rest (NodesSummary) the pages that follow, by
// marker in the same order.
func (c *Client) ClusterNodeIDs(ctx context.Context, cl *Cluster) ([]string, error) {
	ids := slices.Clone(cl.Nodes)
	if cl.NodesSummary == nil || len(ids) == 0 {
		return ids, nil
	}
	for len(ids) < cl.NodesSummary.Total {
		page, err := c.ListNodes(ctx, url.Values{"cluster_id": {cl.ID}, "sort": {"index"}, "limit": {strconv.Itoa(MaxInlineIDs)},
			"marker": {ids[len(ids)-1]}})
		if err != nil {
			return nil, err
		}
		for _, n := range page {
			ids = append(ids, n.ID)
		}
		if len(page) < MaxInlineIDs {
			break
		}
	}
	return ids, nil
}

// ListNodes lists nodes with filters such as cluster_id.
func (c *Client) ListNodes(ctx context.Context, query url.Values) ([]Node, error) {
	var out struct {
		Nodes []Node `json:"nodes"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/nodes", query, nil, &out); err != nil {
		return nil, err
	}
	return out.Nodes, nil
}

// GetNode fetches a node by id, name or short id.
func (c *Client) GetNode(ctx context.Context, ident string) (*Node, error) {
	var out struct {
		Node Node `json:"node"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/nodes/"+url.PathEscape(ident), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out.Node, nil
}

// ProfileTypeOperations lists the node operations of a profile type.
func (c *Client) ProfileTypeOperations(ctx context.Context, typ string) (map[string]Operation, error) {
	var out struct {
		Operations map[string]Operation `json:"operations"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/profile-types/"+url.PathEscape(typ)+"/ops", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Operations, nil
}

// NodeOperation runs a node operation and returns its action's id.
func (c *Client) NodeOperation(ctx context.Context, node, name string, params map[string]any) (string, error) {
	if params == nil {
		params = map[string]any{}
	}
	r, err := c.Do(ctx, http.MethodPost, "/v1/nodes/"+url.PathEscape(node)+"/ops", nil, map[string]any{name: params}, nil)
	if err != nil {
		return "", err
	}
	return r.ActionID(), nil
}

// ClusterOperation runs a node operation on the cluster's nodes that match
// filters (all of them when nil) and returns its action's id.
func (c *Client) ClusterOperation(ctx context.Context, cluster, name string, filters, params map[string]any) (string, error) {
	body := map[string]any{}
	if filters != nil {
		body["filters"] = filters
	}
	if params != nil {
		body["params"] = params
	}
	r, err := c.Do(ctx, http.MethodPost, "/v1/clusters/"+url.PathEscape(cluster)+"/ops", nil, map[string]any{name: body}, nil)
	if err != nil {
		return "", err
	}
	return r.ActionID(), nil
}

// ClusterAction posts {name: params} to a cluster and returns the action id.
func (c *Client) ClusterAction(ctx context.Context, cluster, name string, params map[string]any) (string, error) {
	if params == nil {
		params = map[string]any{}
	}
	r, err := c.Do(ctx, http.MethodPost, "/v1/clusters/"+url.PathEscape(cluster)+"/actions", nil, map[string]any{name: params}, nil)
	if err != nil {
		return "", err
	}
	return r.ActionID(), nil
}
