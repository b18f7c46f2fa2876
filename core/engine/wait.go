package engine

import (
	"context"
	"fmt"
	"time"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
)

// waitChildren waits until every child of a is terminal, then reports the
// first failure. It watches for its own cancellation too.
func (e *Engine) waitChildren(ctx context.Context, a *model.Action) error {
	ch := e.waiter(a.ID)
	defer e.dropWaiter(a.ID)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		// From the read pool (SQLite): each batch of children wakes the
		// parent as its results commit, and a read there does not queue
		// for the writer that the children's batches keep busy.
		sum, err := store.ReadsOf(e.store).SummarizeChildren(ctx, a.ID)
		if err != nil {
			return err
		}
		if sum.Pending == 0 {
			if sum.Failed > 0 {
				return fmt.Errorf("%s", sum.FirstFailure)
			}
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

// waiter returns the channel a parent waits on for news of its children.
func (e *Engine) waiter(id string) chan struct{} {
	e.mu.Lock()
	defer e.mu.Unlock()
	ch, ok := e.waiters[id]
	if !ok {
		ch = make(chan struct{}, 1)
		e.waiters[id] = ch
	}
	return ch
}

func (e *Engine) dropWaiter(id string) {
	e.mu.Lock()
	delete(e.waiters, id)
	e.mu.Unlock()
}

func (e *Engine) notifyParent(parentID string) {
	if parentID == "" {
		return
	}
	e.mu.Lock()
	ch := e.waiters[parentID]
	e.mu.Unlock()
	if ch != nil {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

// lock waits for a lock with backoff until ctx ends; the conflict check at
// submit keeps such waits short.
func (e *Engine) lock(ctx context.Context, try func() (bool, error)) error {
	delay := 50 * time.Millisecond
	for {
		ok, err := try()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if err := sleepCtx(ctx, delay); err != nil {
			return fmt.Errorf("Failed in locking: %w", err)
		}
		delay = min(delay*2, time.Second)
	}
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Wait blocks until the action is terminal or ctx ends; it is for tests and
// the CLI's in-process callers.
func (e *Engine) Wait(ctx context.Context, id string) (*model.Action, error) {
	t := time.NewTicker(20 * time.Millisecond)
	defer t.Stop()
	for {
		a, err := e.store.GetAction(ctx, id)
		if err != nil {
			return nil, err
		}
		if a.Terminal() {
			return a, nil
		}
		select {
		case <-ctx.Done():
			return a, ctx.Err()
		case <-t.C:
		}
	}
}
