package server

import (
	"net/http"

	"github.com/grovehq/grove/api"
	"github.com/grovehq/grove/core/engine"
)

// enterMilestone is POST /v1/milestones/{id}/enter: the decision is
// answered at once (202) and carried out in the background, each step an
// action with its events.
func (s *Server) enterMilestone(w http.ResponseWriter, r *http.Request, c engine.Caller) error {
	name, d, err := s.e.EnterMilestone(s.ctx(r), c, r.PathValue("id"))
	if err != nil {
		return err
	}
	out := api.MilestoneEntered{Milestone: name, Steps: []api.MilestoneStep{}, Held: []api.MilestoneHeld{}}
	for _, st := range d.Steps {
		out.Steps = append(out.Steps, api.MilestoneStep{Cluster: st.Cluster, Op: string(st.Op), Because: st.Because})
	}
	for _, v := range d.Held {
		out.Held = append(out.Held, api.MilestoneHeld{Cluster: v.Cluster, Reason: v.Reason})
	}
	s.writeJSON(w, http.StatusAccepted, out)
	return nil
}
