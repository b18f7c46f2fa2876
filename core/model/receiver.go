package model

import "time"

// Receiver types (Senlin's). Only webhooks are served: a message receiver
// needs a queue (Zaqar in Senlin) that Grove does not have.
const (
	ReceiverWebhook = "webhook"
	ReceiverMessage = "message"
)

// ReceiverActions maps the cluster actions a webhook may start to the key
// of POST /v1/clusters/{id}/actions that starts them. CLUSTER_CREATE is
// never one (Senlin refuses it too); CLUSTER_DELETE and CLUSTER_UPDATE are
// left out because a leaked webhook URL must not be able to destroy a
// cluster or change its profile. It returns a new map on each call.
func ReceiverActions() map[string]string {
	return map[string]string{
		ClusterScaleOutAction:     "scale_out",
		ClusterScaleInAction:      "scale_in",
		ClusterResizeAction:       "resize",
		ClusterCheckAction:        "check",
		ClusterRecoverAction:      "recover",
		ClusterAddNodesAction:     "add_nodes",
		ClusterDelNodesAction:     "del_nodes",
		ClusterReplaceNodesAction: "replace_nodes",
		ClusterAttachPolicyAction: "policy_attach",
		ClusterDetachPolicyAction: "policy_detach",
		ClusterUpdatePolicyAction: "policy_update",
	}
}

// Receiver is Senlin's receiver: a way for something outside Grove (an
// alert manager) to start an action on a cluster. A webhook receiver is
// called at a URL holding a secret; the store keeps only the secret's
// SHA-256 (Hash), as it does for tokens.
type Receiver struct {
	ID        string
	Name      string
	Type      string
	ClusterID string
	Action    string
	Actor     map[string]any
	Params    map[string]any
	// Channel is what the API shows of how to call the receiver, without
	// the secret (which is shown once, at creation).
	Channel   map[string]any
	Hash      string
	User      string
	Project   string
	Domain    string
	CreatedAt time.Time
	UpdatedAt *time.Time
}
