package engine

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// WebhookPrefix starts every webhook secret, so a leaked URL is
// recognisable (and greppable by secret scanners), and so a webhook secret
// is never mistaken for an API token: each is refused where the other is
// expected.
const WebhookPrefix = "grove_wh_"

// MaxReceiverParams bounds how many params a receiver or a trigger carries.
const MaxReceiverParams = 32

// WellFormedWebhook reports whether s has the shape of a webhook secret:
// the prefix and exactly 32 bytes in unpadded base64url.
func WellFormedWebhook(s string) bool {
	rest, ok := strings.CutPrefix(s, WebhookPrefix)
	if !ok || len(rest) != base64.RawURLEncoding.EncodedLen(tokenBytes) {
		return false
	}
	b, err := base64.RawURLEncoding.Strict().DecodeString(rest)
	return err == nil && len(b) == tokenBytes
}

func newWebhookSecret() (string, error) {
	b := make([]byte, tokenBytes)
	if _, err := rand.Read(b); err != nil {
		return "", fmt.Errorf("make a webhook secret: %w", err)
	}
	return WebhookPrefix + base64.RawURLEncoding.EncodeToString(b), nil
}

// ReceiverCreate is a request for a new receiver, as Senlin's
// {"receiver": {...}} body.
type ReceiverCreate struct {
	Name      string
	Type      string
	ClusterID string
	Action    string
	Params    map[string]any
}

// CreateReceiver makes a webhook receiver and returns it with its secret,
// which is not kept and cannot be shown again: the webhook URL is
// /v1/webhooks/<secret>/trigger.
func (e *Engine) CreateReceiver(ctx context.Context, c Caller, req ReceiverCreate) (*model.Receiver, string, error) {
	if err := model.ValidateName("receiver.name", req.Name); err != nil {
		return nil, "", BadRequest("%s", err)
	}
	switch req.Type {
	case model.ReceiverWebhook:
	case model.ReceiverMessage:
		return nil, "", BadRequest("receiver.type message is not supported: a message receiver reads a message queue (Zaqar in Senlin), and Grove has none; use a webhook receiver.")
	case "":
		return nil, "", BadRequest("receiver.type is required; Grove serves webhook receivers.")
	default:
		return nil, "", BadRequest("receiver.type %q is not a receiver type; Grove serves webhook receivers.", req.Type)
	}
	if req.ClusterID == "" {
		return nil, "", BadRequest("receiver.cluster_id is required for a webhook receiver: it names the cluster the webhook acts on.")
	}
	cl, err := e.store.FindCluster(ctx, c.Project, req.ClusterID)
	if err != nil {
		return nil, "", bodyRef("receiver.cluster_id", err)
	}
	if err := checkReceiverAction("receiver.action", req.Action); err != nil {
		return nil, "", err
	}
	params, err := receiverParams("receiver.params", req.Params)
	if err != nil {
		return nil, "", err
	}
	if err := checkReceiverParams(req.Action, params); err != nil {
		return nil, "", err
	}
	secret, err := newWebhookSecret()
	if err != nil {
		return nil, "", err
	}
	v := &model.Receiver{ID: e.newID(), Name: req.Name, Type: req.Type, ClusterID: cl.ID, Action: req.Action,
		Actor: map[string]any{}, Params: params, Channel: map[string]any{}, Hash: HashToken(secret),
		User: c.User, Project: c.Project, CreatedAt: e.cfg.Now()}
	if err := e.store.CreateReceiver(ctx, v); err != nil {
		return nil, "", err
	}
	return v, secret, nil
}

// checkReceiverAction refuses an action a webhook may not start, saying
// why.
func checkReceiverAction(field, action string) error {
	if _, ok := model.ReceiverActions()[action]; ok {
		return nil
	}
	allowed := slices.Sorted(maps.Keys(model.ReceiverActions()))
	switch action {
	case "":
		return BadRequest("%s is required for a webhook receiver: it names the cluster action the webhook starts, one of %s.", field, strings.Join(allowed, ", "))
	case model.ClusterCreateAction:
		return BadRequest("%s %s cannot be started by a webhook: a webhook acts on a cluster that exists.", field, action)
	case model.ClusterDeleteAction, model.ClusterUpdateAction:
		return BadRequest("%s %s cannot be started by a webhook in Grove: anyone holding the webhook's URL could destroy the cluster or change its profile; use one of %s.",
			field, action, strings.Join(allowed, ", "))
	}
	return BadRequest("%s %q is not a cluster action a webhook can start; use one of %s.", field, action, strings.Join(allowed, ", "))
}

// receiverParams checks a receiver's or a trigger's params: at most
// MaxReceiverParams, each a string, number or boolean (what a URL query
// can carry), and returns a copy.
func receiverParams(field string, p map[string]any) (map[string]any, error) {
	if len(p) > MaxReceiverParams {
		return nil, BadRequest("%s has %d entries; at most %d are allowed.", field, len(p), MaxReceiverParams)
	}
	out := make(map[string]any, len(p))
	// In key order, so the field an error names does not vary.
	for _, k := range slices.Sorted(maps.Keys(p)) {
		v := p[k]
		switch v.(type) {
		case string, float64, bool, int:
		default:
			return nil, BadRequest("%s.%s must be a string, a number or a boolean.", field, k)
		}
		out[k] = v
	}
	return out, nil
}

// checkReceiverParams holds a receiver's params to the rules of its
// action's parameters, the ones a trigger's request is held to, so a
// receiver cannot keep params every trigger would be refused for. Params
// the action needs but the receiver leaves out are not asked for: a
// trigger can add them.
func checkReceiverParams(action string, params map[string]any) error {
	return checkActionParams(model.ReceiverActions()[action], "receiver.params", params)
}

// ReceiverUpdate changes a receiver (Senlin's PATCH, microversion 1.7):
// nil fields are kept.
type ReceiverUpdate struct {
	Name   *string
	Action *string
	Params map[string]any
}

// UpdateReceiver renames a receiver or changes its action or params. Its
// secret and cluster do not change: the webhook URL stays valid.
func (e *Engine) UpdateReceiver(ctx context.Context, c Caller, ident string, req ReceiverUpdate) (*model.Receiver, error) {
	v, err := e.store.FindReceiver(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	changed := false
	if req.Name != nil && *req.Name != v.Name {
		if err := model.ValidateName("receiver.name", *req.Name); err != nil {
			return nil, BadRequest("%s", err)
		}
		v.Name, changed = *req.Name, true
	}
	if req.Action != nil && *req.Action != v.Action {
		if err := checkReceiverAction("receiver.action", *req.Action); err != nil {
			return nil, err
		}
		v.Action, changed = *req.Action, true
	}
	if req.Params != nil {
		p, err := receiverParams("receiver.params", req.Params)
		if err != nil {
			return nil, err
		}
		v.Params, changed = p, true
	}
	if !changed {
		return nil, BadRequest("No property needs an update.")
	}
	// Judged together: a new action may not take the params kept. A
	// rename alone is not judged, so a receiver made before params were
	// checked can still be renamed.
	if req.Action != nil || req.Params != nil {
		if err := checkReceiverParams(v.Action, v.Params); err != nil {
			return nil, err
		}
	}
	now := e.cfg.Now()
	v.UpdatedAt = &now
	if err := e.store.UpdateReceiver(ctx, v); err != nil {
		return nil, err
	}
	return v, nil
}

// DeleteReceiver deletes a receiver: its webhook URL is refused from then
// on.
func (e *Engine) DeleteReceiver(ctx context.Context, c Caller, ident string) error {
	v, err := e.store.FindReceiver(ctx, c.Project, ident)
	if err != nil {
		return err
	}
	return e.store.DeleteReceiver(ctx, v.ID)
}

// NotifyReceiver is Senlin's notify, which only message receivers answer;
// Grove has none, so it names the receiver and says what to do instead.
func (e *Engine) NotifyReceiver(ctx context.Context, c Caller, ident string) error {
	v, err := e.store.FindReceiver(ctx, c.Project, ident)
	if err != nil {
		return err
	}
	return BadRequest("Receiver '%s' is a %s receiver; notify is for message receivers, which Grove does not serve (it has no message queue). Trigger a webhook with POST to its URL.", v.Name, v.Type)
}

// WebhookNotFound is the answer to a webhook secret that names no
// receiver; it never repeats what was sent.
func WebhookNotFound() error {
	return &Error{Status: 404, Type: "ResourceNotFound",
		Message: "No webhook has this URL: it is malformed, or its receiver was deleted. A receiver's webhook URL is shown once, when it is created."}
}

// Webhook resolves a webhook secret to its receiver. Like Authenticate,
// it looks the receiver up by the secret's hash and compares the hashes in
// constant time.
func (e *Engine) Webhook(ctx context.Context, secret string) (*model.Receiver, error) {
	if !WellFormedWebhook(secret) {
		return nil, WebhookNotFound()
	}
	hash := HashToken(secret)
	v, err := e.store.ReceiverByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, WebhookNotFound()
	}
	if err != nil {
		return nil, err
	}
	if subtle.ConstantTimeCompare([]byte(v.Hash), []byte(hash)) != 1 {
		return nil, WebhookNotFound()
	}
	return v, nil
}

// TriggerWebhook starts the receiver's action on its cluster with the
// receiver's params, over which the trigger's params are merged (Senlin's
// rule). The action runs in the receiver's project as the receiver's
// creator, and is named webhook_<receiver id[:8]> as in Senlin, so the
// action list says where it came from.
func (e *Engine) TriggerWebhook(ctx context.Context, v *model.Receiver, params map[string]any) (*model.Action, error) {
	extra, err := receiverParams("params", params)
	if err != nil {
		return nil, err
	}
	merged := maps.Clone(v.Params)
	if merged == nil {
		merged = map[string]any{}
	}
	maps.Copy(merged, extra)
	key, ok := model.ReceiverActions()[v.Action]
	if !ok {
		return nil, BadRequest("Receiver '%s' names action %s, which a webhook cannot start.", v.Name, v.Action)
	}
	c := Caller{User: v.User, Project: v.Project, Role: model.RoleMember}
	return e.clusterAction(ctx, c, v.ClusterID, map[string]any{key: merged}, "webhook_"+v.ID[:8])
}
