package api

import (
	"context"
	"net/http"
	"net/url"
)

// HostRecord is a host as the store knows it (GET /v1/hosts): an agent, or
// a placement target a driver reported.
type HostRecord struct {
	Name string `json:"name"`
	// Kind is agent, container-engine, hypervisor, esxi, or the
	// reporting profile type.
	Kind string `json:"kind"`
	// Driver is the profile type that reports the host; for an agent,
	// the host-local types it runs.
	Driver string `json:"driver"`
	// Labels are the reported labels with the operator's over them.
	Labels         map[string]string  `json:"labels"`
	ReportedLabels map[string]string  `json:"reported_labels"`
	OperatorLabels map[string]string  `json:"operator_labels"`
	Load           map[string]float64 `json:"load"`
	// State is up, down or maintenance.
	State string `json:"state"`
	// Availability is active, pause or drain.
	Availability string `json:"availability"`
	// Nodes is how many nodes run on the host.
	Nodes     int     `json:"nodes"`
	Heartbeat string  `json:"heartbeat"`
	CreatedAt string  `json:"created_at"`
	UpdatedAt *string `json:"updated_at"`
}

// HostUpdate is the body of PATCH /v1/hosts/{name}: fields left nil are
// unchanged.
type HostUpdate struct {
	// Availability is active, pause or drain.
	Availability *string `json:"availability,omitempty"`
	// Labels replace the operator's labels.
	Labels *map[string]string `json:"labels,omitempty"`
}

// ListHosts lists every host.
func (c *Client) ListHosts(ctx context.Context) ([]HostRecord, error) {
	var out struct {
		Hosts []HostRecord `json:"hosts"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/hosts", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Hosts, nil
}

// GetHost fetches one host by name.
func (c *Client) GetHost(ctx context.Context, name string) (*HostRecord, error) {
	var out struct {
		Host HostRecord `json:"host"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/hosts/"+url.PathEscape(name), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out.Host, nil
}

// UpdateHost sets a host's availability or operator labels (admin only).
func (c *Client) UpdateHost(ctx context.Context, name string, in HostUpdate) (*HostRecord, error) {
	var out struct {
		Host HostRecord `json:"host"`
	}
	if _, err := c.Do(ctx, http.MethodPatch, "/v1/hosts/"+url.PathEscape(name), nil, map[string]any{"host": in}, &out); err != nil {
		return nil, err
	}
	return &out.Host, nil
}
