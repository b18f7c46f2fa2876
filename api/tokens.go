package api

import (
	"context"
	"net/http"
	"net/url"
)

// Token is an API token as the agent shows it: the secret only in the answer
// to its creation, never again.
type Token struct {
	// ID is the token's accessor: what lists, audit records and revoke use.
	ID      string `json:"id"`
	Name    string `json:"name"`
	Project string `json:"project"`
	// Role is reader, member or admin.
	Role      string  `json:"role"`
	CreatedAt string  `json:"created_at"`
	ExpiresAt *string `json:"expires_at,omitempty"`
	// CreatedBy is the id of the token that created this one, or
	// "bootstrap".
	CreatedBy string `json:"created_by"`
	// Secret is what a client sends as X-Auth-Token; set only by
	// CreateToken.
	Secret string `json:"secret,omitempty"`
}

// TokenCreate is the body of POST /v1/tokens.
type TokenCreate struct {
	Name    string `json:"name,omitempty"`
	Project string `json:"project"`
	Role    string `json:"role"`
	// TTL is a duration such as "24h"; empty for a token that does not
	// expire.
	TTL string `json:"ttl,omitempty"`
}

// CreateToken creates a token (admin only) and returns it with its secret.
func (c *Client) CreateToken(ctx context.Context, in TokenCreate) (*Token, error) {
	var out struct {
		Token Token `json:"token"`
	}
	if _, err := c.Do(ctx, http.MethodPost, "/v1/tokens", nil, map[string]any{"token": in}, &out); err != nil {
		return nil, err
	}
	return &out.Token, nil
}

// ListTokens lists every token, without secrets (admin only).
func (c *Client) ListTokens(ctx context.Context) ([]Token, error) {
	var out struct {
		Tokens []Token `json:"tokens"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/tokens", nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Tokens, nil
}

// GetToken fetches one token by id, without its secret (admin only).
func (c *Client) GetToken(ctx context.Context, id string) (*Token, error) {
	var out struct {
		Token Token `json:"token"`
	}
	if _, err := c.Do(ctx, http.MethodGet, "/v1/tokens/"+url.PathEscape(id), nil, nil, &out); err != nil {
		return nil, err
	}
	return &out.Token, nil
}

// RevokeToken revokes a token by id (admin only); it is refused from then on.
func (c *Client) RevokeToken(ctx context.Context, id string) error {
	_, err := c.Do(ctx, http.MethodDelete, "/v1/tokens/"+url.PathEscape(id), nil, nil, nil)
	return err
}

// ProjectGrants lists the host-access profile types (such as local.process)
// a project may use (admin only).
func (c *Client) ProjectGrants(ctx context.Context, project string) ([]string, error) {
	var out struct {
		Grants []string `json:"grants"`
	}
	if _, err := c.Do(ctx, http.MethodGet, grantsPath(project), nil, nil, &out); err != nil {
		return nil, err
	}
	return out.Grants, nil
}

// AllowType grants a project a host-access profile type (admin only).
func (c *Client) AllowType(ctx context.Context, project, typ string) error {
	_, err := c.Do(ctx, http.MethodPut, grantsPath(project)+"/"+url.PathEscape(typ), nil, nil, nil)
	return err
}

// DenyType withdraws a project's grant of a profile type (admin only).
func (c *Client) DenyType(ctx context.Context, project, typ string) error {
	_, err := c.Do(ctx, http.MethodDelete, grantsPath(project)+"/"+url.PathEscape(typ), nil, nil, nil)
	return err
}

func grantsPath(project string) string { return "/v1/projects/" + url.PathEscape(project) + "/grants" }
