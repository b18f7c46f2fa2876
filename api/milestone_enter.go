package api

import (
	"context"
	"net/http"
	"net/url"
)

// MilestoneStep is one stop or start entering a milestone leads to, in the
// order Grove carries them out (stops leaves first, then starts
// dependencies first).
type MilestoneStep struct {
	Cluster string `json:"cluster"`
	// Op is "stop" or "start".
	Op      string `json:"op"`
	Because string `json:"because,omitempty"`
}

// MilestoneHeld is a cluster of the milestone that stays down, and why.
type MilestoneHeld struct {
	Cluster string `json:"cluster"`
	Reason  string `json:"reason"`
}

// MilestoneEntered is the answer to entering a milestone: what it stops
// and starts, which Grove then does in the background, each step a
// CLUSTER_STOP or CLUSTER_START action.
type MilestoneEntered struct {
	Milestone string          `json:"milestone"`
	Steps     []MilestoneStep `json:"steps"`
	Held      []MilestoneHeld `json:"held"`
}

// EnterMilestone enters a milestone by id, name or short id, or "all" or
// "none".
func (c *Client) EnterMilestone(ctx context.Context, ident string) (*MilestoneEntered, error) {
	var out MilestoneEntered
	if _, err := c.Do(ctx, http.MethodPost, "/v1/milestones/"+url.PathEscape(ident)+"/enter", nil, map[string]any{}, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
