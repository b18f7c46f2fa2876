package server

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/plugins/host"
	"github.com/grovehq/grove/plugins/sdk"
)

func support(versions []string) map[string][]api.SupportStatus {
	out := map[string][]api.SupportStatus{}
	for _, v := range versions {
		out[v] = []api.SupportStatus{{Status: "SUPPORTED", Since: "2026.11"}}
	}
	return out
}

func (s *Server) listTypes(kind string) handler {
	return func(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
		var out []api.TypeSummary
		for _, c := range s.opts.Host.Components(kind) {
			for _, v := range c.Versions {
				out = append(out, api.TypeSummary{Name: c.Type, Version: v, SupportStatus: support([]string{v})})
			}
		}
		if out == nil {
			out = []api.TypeSummary{}
		}
		s.writeJSON(w, http.StatusOK, map[string]any{kind + "_types": out})
		return nil
	}
}

// findType resolves a type name as the API spells it, "TYPE" or
// "TYPE-VERSION", to the component serving it.
func (s *Server) findType(kind, name string) (*host.Component, error) {
	typ, version, _ := strings.Cut(name, "-")
	c, ok := s.opts.Host.Component(kind, typ)
	if !ok || (version != "" && !contains(c.Versions, version)) {
		return nil, &engine.Error{Status: http.StatusNotFound, Type: "ResourceNotFound", Message: "The " + kind + "_type '" + name + "' could not be found."}
	}
	return c, nil
}

func (s *Server) showType(kind string) handler {
	return func(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
		name := r.PathValue("type")
		c, err := s.findType(kind, name)
		if err != nil {
			return err
		}
		schema := map[string]any{}
		for k, p := range c.Schema {
			schema[k] = p
		}
		s.writeJSON(w, http.StatusOK, map[string]any{kind + "_type": api.TypeDetail{Name: name, Schema: schema, SupportStatus: support(c.Versions),
			Description: c.Description, Plugin: c.Plugin}})
		return nil
	}
}

// listHosts asks a profile type's driver where it can place nodes.
func (s *Server) listHosts(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	c, err := s.findType("profile", r.PathValue("type"))
	if err != nil {
		return err
	}
	typ := c.Type
	var hosts []sdk.Host
	err = s.opts.Host.Call(r.Context(), "profile", typ, func(ctx context.Context, client *sdk.Client) (err error) {
		hosts, err = client.Hosts(ctx, typ)
		if status.Code(err) == codes.Unimplemented {
			hosts, err = nil, nil // a driver without hosts places nodes nowhere in particular
		}
		return err
	})
	if errors.Is(err, host.ErrUnavailable) {
		return fmt.Errorf("The hosts of %s cannot be listed now: %w.", typ, err)
	}
	if err != nil {
		return &engine.Error{Status: http.StatusBadGateway, Type: "PluginError", Message: fmt.Sprintf("Listing the hosts of %s failed: %v.", typ, err)}
	}
	// What a driver reports is recorded as its hosts (GET /v1/hosts).
	if err := s.e.RecordDriverHosts(s.ctx(r), typ, hosts); err != nil {
		return err
	}
	out := make([]api.Host, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, api.Host{Name: h.Name, Attributes: h.Attributes, Load: h.Load, Error: h.Err})
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"hosts": out})
	return nil
}
