package api

import (
	"context"
	"net/http"
	"net/url"
)

// Receiver is a receiver as the API shows it (Senlin's shape). Its webhook
// URL, channel.alarm_url, holds a secret and is shown only in the answer to
// its creation.
type Receiver struct {
	ID        string         `json:"id"`
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	ClusterID string         `json:"cluster_id"`
	Action    string         `json:"action"`
	Actor     map[string]any `json:"actor"`
	Params    map[string]any `json:"params"`
	Channel   map[string]any `json:"channel"`
	User      string         `json:"user"`
	Project   string         `json:"project"`
	Domain    string         `json:"domain"`
	CreatedAt *string        `json:"created_at"`
	UpdatedAt *string        `json:"updated_at"`
}

// AlarmURL is the webhook URL of a receiver just created, or "".
func (r *Receiver) AlarmURL() string {
	s, _ := r.Channel["alarm_url"].(string)
	return s
}

// ReceiverCreate is the body of POST /v1/receivers.
type ReceiverCreate struct {
	Name      string         `json:"name"`
	Type      string         `json:"type"`
	ClusterID string         `json:"cluster_id,omitempty"`
	Action    string         `json:"action,omitempty"`
	Params    map[string]any `json:"params,omitempty"`
}

// CreateReceiver creates a receiver; the answer's AlarmURL is its webhook
// URL, shown this once.
func (c *Client) CreateReceiver(ctx context.Context, req ReceiverCreate) (*Receiver, error) {
	var out struct {
		Receiver Receiver `json:"receiver"`
	}
	if _, err := c.Do(ctx, http.MethodPost, "/v1/receivers", nil, map[string]any{"receiver": req}, &out); err != nil {
		return nil, err
	}
	return &out.Receiver, nil
}

// GetReceiver returns a receiver by id, name or short id.
func (c *Client) GetReceiver(ctx context.Context, ident string) (*Receiver, error) {
	var out struct {
		Receiver Receiver `json:"receiver"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/receivers/"+url.PathEscape(ident), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out.Receiver, nil
}
