package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// A deletion policy's lifecycle hook (Senlin's, of type webhook): the node
// deletions a shrink forks for ACTIVE nodes with a physical id are held in
// WAITING_LIFECYCLE_COMPLETION, the hook's URL is told of each (the token to
// complete it with, the node, its physical id), and each is released when
// the user sends complete_lifecycle with its token or, for all, when the
// hook's timeout passes. The held children and the deadline are recorded
// with the fork, so a resumed action waits for the same ones until the same
// time.

// Keys of the action's data for the hook.
const (
	dataHooksHeld     = "hooks.held"
	dataHooksDeadline = "hooks.deadline"
)

// hookMessage is what the hook's URL is sent for each node held: Senlin's
// lifecycle hook message.
type hookMessage struct {
	Token          string `json:"lifecycle_action_token"`
	NodeID         string `json:"node_id"`
	ResourceID     string `json:"resource_id"`
	TransitionType string `json:"lifecycle_transition_type"`
	ClusterID      string `json:"cluster_id"`
}

// hookClientTimeout bounds one call to a hook's URL.
const hookClientTimeout = 10 * time.Second

// removeWithHook forks the deletions of victims under the hook, tells the
// hook's URL of the nodes held, and waits until they are released.
func (e *Engine) removeWithHook(ctx context.Context, a *model.Action, victims []string, hooks model.HooksData) error {
	err := e.runStage(ctx, a, "remove", func(tx store.Store) error {
		nodes, err := tx.GetNodes(ctx, victims)
		if err != nil {
			return err
		}
		byID := map[string]*model.Node{}
		for _, n := range nodes {
			byID[n.ID] = n
		}
		kids := make([]*model.Action, 0, len(victims))
		held := []string{}
		for _, id := range victims {
			k, err := e.child(a, model.NodeDeleteAction, id, model.NodeDeleteInputs{})
			if err != nil {
				return err
			}
			k.Cause = model.CauseDerivedLifecycle
			if n := byID[id]; n != nil && n.Status == model.NodeActive && n.PhysicalID != "" {
				k.Status, k.StatusReason = model.ActionWaitingLifecycle, "Waiting for lifecycle completion."
				held = append(held, k.ID)
			} else {
				k.StatusReason = "Node not in ACTIVE status."
			}
			kids = append(kids, k)
		}
		a.Data[dataHooksHeld] = held
		if hooks.Timeout > 0 {
			a.Data[dataHooksDeadline] = float64(e.cfg.Now().Add(time.Duration(hooks.Timeout)*time.Second).UnixMicro()) / 1e6
		}
		return tx.CreateActions(ctx, kids)
	})
	if err != nil {
		return err
	}
	e.wake()
	if !stageDone(a, "hooks.told") {
		e.tellHook(ctx, a, hooks)
		if err := e.runStage(ctx, a, "hooks.told", func(store.Store) error { return nil }); err != nil {
			return err
		}
	}
	return e.awaitLifecycle(ctx, a)
}

// tellHook posts one message per held node to the hook's URL. A node
// whose message cannot be delivered is released at once, with a warning:
// no one would complete it.
func (e *Engine) tellHook(ctx context.Context, a *model.Action, hooks model.HooksData) {
	held, _, err := dataOf[[]string](a, dataHooksHeld)
	if err != nil || len(held) == 0 {
		return
	}
	kids, err := e.store.Children(ctx, a.ID)
	if err != nil {
		return
	}
	client := &http.Client{Timeout: hookClientTimeout}
	for _, k := range kids {
		if k.Status != model.ActionWaitingLifecycle {
			continue
		}
		n, err := e.store.GetNode(ctx, k.Target)
		if err == nil {
			err = postHook(ctx, client, hooks.Params.URL, hookMessage{Token: k.ID, NodeID: n.ID, ResourceID: n.PhysicalID,
				TransitionType: "termination", ClusterID: a.ClusterID})
		}
		if err == nil {
			continue
		}
		reason := fmt.Sprintf("The lifecycle hook at %s could not be told of node %s (%v); the node is removed without waiting.", hooks.Params.URL, k.Target, err)
		if _, rerr := e.store.ReleaseLifecycle(ctx, a.ID, k.ID, reason, e.cfg.Now()); rerr != nil {
			e.log.Error("release a lifecycle hold", "action", k.ID, "error", rerr)
		}
		e.event(ctx, a, "hook", reason, model.LevelWarning)
	}
	e.wake()
}

func postHook(ctx context.Context, client *http.Client, url string, m hookMessage) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(b))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("it answered %s", resp.Status)
	}
	return nil
}

// awaitLifecycle waits until no child of a is held, releasing those still
// held when the hook's deadline passes (none: until the action's own
// deadline).
func (e *Engine) awaitLifecycle(ctx context.Context, a *model.Action) error {
	ch := e.waiter(a.ID)
	defer e.dropWaiter(a.ID)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	deadline, timed := a.Data[dataHooksDeadline].(float64)
	for {
		kids, err := e.store.Children(ctx, a.ID)
		if err != nil {
			return err
		}
		held := 0
		for _, k := range kids {
			if k.Status == model.ActionWaitingLifecycle {
				held++
			}
		}
		if held == 0 {
			return nil
		}
		if now := e.cfg.Now(); timed && float64(now.UnixMicro())/1e6 >= deadline {
			n, err := e.store.ReleaseLifecycle(ctx, a.ID, "", "Lifecycle hook timed out; the node is removed.", now)
			if err != nil {
				return err
			}
			e.event(ctx, a, "hook", fmt.Sprintf("The lifecycle hook timed out with %d nodes not completed; they are removed.", n), model.LevelWarning)
			e.wake()
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		case <-t.C:
			if e.cancelRequested(ctx, a.ID) {
				return errCancelled
			}
		}
	}
}

// CompleteLifecycle releases the node removal a lifecycle hook holds, the
// child action named by lifecycle_action_token (complete_lifecycle,
// microversion 1.9): it goes on to delete its node.
func (e *Engine) CompleteLifecycle(ctx context.Context, c Caller, ident string, params map[string]any) (*model.Action, error) {
	for k := range params {
		if k != "lifecycle_action_token" {
			return nil, BadRequest("complete_lifecycle.%s is not a recognised field; the only field is lifecycle_action_token.", k)
		}
	}
	token, _ := params["lifecycle_action_token"].(string)
	if token == "" {
		return nil, BadRequest("complete_lifecycle.lifecycle_action_token must be the id of an action waiting for lifecycle completion.")
	}
	cl, err := e.store.FindCluster(ctx, c.Project, ident)
	if err != nil {
		return nil, err
	}
	a, err := e.store.GetAction(ctx, token)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (a.ClusterID != cl.ID || a.Project != c.Project)) {
		return nil, BadRequest("complete_lifecycle.lifecycle_action_token: cluster '%s' has no action %s.", cl.Name, token)
	}
	if err != nil {
		return nil, err
	}
	n := 0
	if a.Status == model.ActionWaitingLifecycle {
		if n, err = e.store.ReleaseLifecycle(ctx, a.ParentID, a.ID, "Lifecycle completed.", e.cfg.Now()); err != nil {
			return nil, err
		}
	}
	if n == 0 {
		return nil, Conflict("ActionConflict", "The action %s is %s, not waiting for lifecycle completion.", a.ID, a.Status)
	}
	e.wake()
	e.notifyParent(a.ParentID)
	return a, nil
}
