package server

import (
	"net/http"
	"time"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
	"github.com/grovehq/grove/core/model"
)

// Hosts are the whole installation's, not a project's: any token reads
// them, and only an admin changes their availability or labels (routes.go
// registers PATCH with admin), since a drain moves every project's nodes.

func toHost(h *model.Host, nodes int) api.HostRecord {
	v := api.HostRecord{Name: h.Name, Kind: h.Kind, Driver: h.Driver, Labels: h.EffectiveLabels(), ReportedLabels: orEmptyStrings(h.Labels),
		OperatorLabels: orEmptyStrings(h.OperatorLabels), Load: h.Load, State: h.State, Availability: h.Availability, Nodes: nodes,
		Heartbeat: h.Heartbeat.UTC().Format(time.RFC3339Nano), CreatedAt: h.CreatedAt.UTC().Format(time.RFC3339)}
	if v.Load == nil {
		v.Load = map[string]float64{}
	}
	if h.UpdatedAt != nil {
		s := h.UpdatedAt.UTC().Format(time.RFC3339)
		v.UpdatedAt = &s
	}
	return v
}

func orEmptyStrings(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func (s *Server) listStoredHosts(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	hosts, err := s.e.Hosts(s.ctx(r))
	if err != nil {
		return err
	}
	counts, err := s.e.HostNodeCounts(s.ctx(r))
	if err != nil {
		return err
	}
	out := make([]api.HostRecord, 0, len(hosts))
	for _, h := range hosts {
		out = append(out, toHost(h, counts[h.Name]))
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"hosts": out})
	return nil
}

func (s *Server) showHost(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	h, err := s.e.Host(s.ctx(r), r.PathValue("name"))
	if err != nil {
		return err
	}
	counts, err := s.e.HostNodeCounts(s.ctx(r))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"host": toHost(h, counts[h.Name])})
	return nil
}

func (s *Server) updateHost(w http.ResponseWriter, r *http.Request, _ engine.Caller) error {
	body, err := decode(r, "host")
	if err != nil {
		return err
	}
	if err := only(body, "host.", "availability", "labels"); err != nil {
		return err
	}
	var req engine.HostUpdate
	if req.Availability, err = str(body, "availability"); err != nil {
		return engine.BadRequest("host.%s", err.Error())
	}
	if v, ok := body["labels"]; ok && v != nil {
		m, ok := v.(map[string]any)
		if !ok {
			return engine.BadRequest("host.labels must be an object of strings.")
		}
		labels := map[string]string{}
		for k, lv := range m {
			sv, ok := lv.(string)
			if !ok {
				return engine.BadRequest("host.labels.%s must be a string.", k)
			}
			labels[k] = sv
		}
		req.Labels = &labels
	}
	h, err := s.e.UpdateHost(s.ctx(r), r.PathValue("name"), req)
	if err != nil {
		return err
	}
	counts, err := s.e.HostNodeCounts(s.ctx(r))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"host": toHost(h, counts[h.Name])})
	return nil
}
