package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// DefaultAddress is where `grove agent -dev` listens.
const DefaultAddress = "http://127.0.0.1:7470"

// Client talks to a Grove agent.
type Client struct {
	Address string
	Token   string
	HTTP    *http.Client
}

// NewClient returns a client for address, or $GROVE_ADDR, or DefaultAddress.
func NewClient(address string) *Client {
	if address == "" {
		address = os.Getenv("GROVE_ADDR")
	}
	if address == "" {
		address = DefaultAddress
	}
	if !strings.Contains(address, "://") {
		address = "http://" + address
	}
	return &Client{Address: strings.TrimRight(address, "/"), Token: os.Getenv("GROVE_TOKEN"), HTTP: &http.Client{Timeout: 5 * time.Minute}}
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
		return nil, fmt.Errorf("Cannot reach the Grove agent at %s: %w. Is `grove agent` running? Set -address or GROVE_ADDR to point elsewhere.", c.Address, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
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
		return r, &Error{Status: resp.StatusCode, Message: strings.TrimSpace(string(data)), RetryAfter: retry}
	}
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			return r, fmt.Errorf("decode answer from %s %s: %w", method, path, err)
		}
	}
	return r, nil
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
