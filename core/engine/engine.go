// Package engine runs Grove's actions: it persists requests as actions,
// claims them with leases, runs the bound policies around them, forks node
// actions and executes them in batches through the profile drivers.
package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/grovehq/grove/core/model"
	"github.com/grovehq/grove/core/store"
	"github.com/grovehq/grove/plugins/host"
	"github.com/grovehq/grove/plugins/sdk"
)

// Plugins is what the engine needs from the plugin host.
type Plugins interface {
	Client(ctx context.Context, kind, typ string) (*sdk.Client, *host.Component, error)
	Component(kind, typ string) (*host.Component, bool)
	Components(kind string) []*host.Component
	// Health says why the plugin behind a component cannot take work.
	Health(kind, typ string) error
	// Call makes a synchronous call on behalf of an API request, with the
	// short deadline a request can afford.
	Call(ctx context.Context, kind, typ string, fn func(ctx context.Context, c *sdk.Client) error) error
}

// Config tunes the engine. Zero values take the documented defaults.
type Config struct {
	// EngineID owns leases; keep it stable across restarts of one agent so
	// its unfinished actions are reclaimed at once.
	EngineID string
	// ClusterWorkers run top-level actions (default 4).
	ClusterWorkers int
	// NodeWorkers run batches of derived node actions (default 4).
	NodeWorkers int
	// NodeBatch is the most node actions run in one driver call (default 250).
	NodeBatch int
	// Lease is how long a claim lasts without renewal (default 30s).
	Lease time.Duration
	// Poll is how often idle workers look for work other agents queued
	// (default 500ms); work queued by this agent wakes them at once.
	Poll time.Duration
	// MaxNodesPerCluster bounds cluster sizes (default 10000).
	MaxNodesPerCluster int
	// DefaultTimeout is the default action timeout in seconds (default 3600).
	DefaultTimeout int
	// CheckInterval is how often every cluster's nodes are checked; a
	// negative value turns health checks off (default 5s).
	CheckInterval time.Duration
	// Retention is how many finished actions and events are kept per
	// cluster and per node; negative keeps everything (default 50).
	Retention int
	// ReapInterval is how often the reaper runs (default 1m).
	ReapInterval time.Duration
	// IgnoreDriverEvents turns off following the drivers' node events.
	IgnoreDriverEvents bool
	// Now is the clock (default time.Now).
	Now func() time.Time
}

func (c *Config) defaults() {
	if c.EngineID == "" {
		c.EngineID = uuid.NewString()
	}
	if c.ClusterWorkers <= 0 {
		c.ClusterWorkers = 4
	}
	if c.NodeWorkers <= 0 {
		c.NodeWorkers = 4
	}
	if c.NodeBatch <= 0 {
		c.NodeBatch = 250
	}
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	if c.Poll <= 0 {
		c.Poll = 500 * time.Millisecond
	}
	if c.MaxNodesPerCluster <= 0 {
		c.MaxNodesPerCluster = 10000
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = 3600
	}
	if c.CheckInterval == 0 {
		c.CheckInterval = 5 * time.Second
	}
	if c.Retention == 0 {
		c.Retention = 50
	}
	if c.ReapInterval <= 0 {
		c.ReapInterval = time.Minute
	}
	if c.Now == nil {
		c.Now = time.Now
	}
}

// Engine runs actions.
type Engine struct {
	cfg     Config
	store   store.Store
	plugins Plugins
	log     hclog.Logger
	ports   *portAllocator

	wakeCluster chan struct{}
	wakeNode    chan struct{}
	healthNow   chan struct{}

	mu      sync.Mutex
	running map[string]context.CancelFunc // actions this engine runs
	waiters map[string]chan struct{}      // parents waiting for children
	rngMu   sync.Mutex
	rng     *rand.Rand

	// suspects are nodes a driver reported down since the last health round.
	suspectMu sync.Mutex
	suspects  map[string]struct{}

	wg     sync.WaitGroup
	cancel context.CancelFunc
}

// New returns an engine; call Start to run workers.
func New(s store.Store, p Plugins, log hclog.Logger, cfg Config) *Engine {
	cfg.defaults()
	return &Engine{
		cfg: cfg, store: s, plugins: p, log: log, ports: newPortAllocator(),
		wakeCluster: make(chan struct{}, 1), wakeNode: make(chan struct{}, 1), healthNow: make(chan struct{}, 1),
		running: map[string]context.CancelFunc{}, waiters: map[string]chan struct{}{}, suspects: map[string]struct{}{},
		rng: rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
	}
}

// ID returns the engine id.
func (e *Engine) ID() string { return e.cfg.EngineID }

// Store returns the engine's store.
func (e *Engine) Store() store.Store { return e.store }

// Start reclaims what a previous run left and starts the workers.
func (e *Engine) Start(ctx context.Context) error {
	n, err := e.store.ReclaimActions(ctx, e.cfg.EngineID, e.cfg.Now())
	if err != nil {
		return fmt.Errorf("reclaim actions at start-up: %w", err)
	}
	if n > 0 {
		e.log.Info("reclaimed unfinished actions", "count", n)
	}
	if err := e.reconcileNodes(ctx); err != nil {
		return fmt.Errorf("reconcile nodes at start-up: %w", err)
	}
	ctx, e.cancel = context.WithCancel(context.Background())
	for i := 0; i < e.cfg.ClusterWorkers; i++ {
		e.wg.Add(1)
		go e.worker(ctx, false)
	}
	for i := 0; i < e.cfg.NodeWorkers; i++ {
		e.wg.Add(1)
		go e.worker(ctx, true)
	}
	e.wg.Add(1)
	go e.leaseLoop(ctx)
	if e.cfg.CheckInterval > 0 {
		e.wg.Add(1)
		go e.healthLoop(ctx)
		if !e.cfg.IgnoreDriverEvents {
			e.watchDrivers(ctx)
		}
	}
	e.wg.Add(1)
	go e.reapLoop(ctx)
	return nil
}

// Stop stops the workers and waits for running actions to return. Actions
// cut short stay RUNNING with their lease and are reclaimed at next start.
func (e *Engine) Stop() {
	if e.cancel != nil {
		e.cancel()
	}
	e.wg.Wait()
	// Another agent sharing the store takes the health checks over at once
	// instead of when the claims expire.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := e.store.ReleaseHealth(ctx, e.cfg.EngineID); err != nil {
		e.log.Warn("release health claims", "error", err)
	}
}

func (e *Engine) wake() {
	for _, ch := range []chan struct{}{e.wakeCluster, e.wakeNode} {
		select {
		case ch <- struct{}{}:
		default:
		}
	}
}

func (e *Engine) worker(ctx context.Context, nodeLevel bool) {
	defer e.wg.Done()
	wake := e.wakeCluster
	max := 1
	if nodeLevel {
		wake, max = e.wakeNode, e.cfg.NodeBatch
	}
	t := time.NewTicker(e.cfg.Poll)
	defer t.Stop()
	for {
		actions, err := e.store.ClaimActions(ctx, e.cfg.EngineID, e.cfg.Now().Add(e.cfg.Lease), nodeLevel, max)
		if err != nil && ctx.Err() == nil {
			e.log.Error("claim actions", "error", err)
		}
		if len(actions) > 0 {
			// Another worker may find more right away.
			e.wakeOne(wake)
			if nodeLevel {
				e.runNodeBatch(ctx, actions)
			} else {
				e.runAction(ctx, actions[0])
			}
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-wake:
		case <-t.C:
		}
	}
}

func (e *Engine) wakeOne(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// leaseLoop renews the leases of running actions and reclaims actions whose
// lease expired.
func (e *Engine) leaseLoop(ctx context.Context) {
	defer e.wg.Done()
	t := time.NewTicker(e.cfg.Lease / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		// Take over work whose owner stopped renewing: another agent on the
		// same database that crashed.
		if n, err := e.store.ReclaimActions(ctx, "", e.cfg.Now()); err != nil && ctx.Err() == nil {
			e.log.Error("reclaim expired leases", "error", err)
		} else if n > 0 {
			e.log.Warn("took over actions whose lease expired", "count", n)
			e.wake()
		}
		e.mu.Lock()
		ids := make([]string, 0, len(e.running))
		for id := range e.running {
			ids = append(ids, id)
		}
		e.mu.Unlock()
		if len(ids) == 0 {
			continue
		}
		if err := e.store.RenewLeases(ctx, e.cfg.EngineID, ids, e.cfg.Now().Add(e.cfg.Lease)); err != nil && ctx.Err() == nil {
			e.log.Error("renew leases", "error", err)
		}
	}
}

func (e *Engine) track(id string, cancel context.CancelFunc) {
	e.mu.Lock()
	e.running[id] = cancel
	e.mu.Unlock()
}

func (e *Engine) untrack(id string) {
	e.mu.Lock()
	delete(e.running, id)
	e.mu.Unlock()
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

// errCancelled ends an action that was cancelled.
var errCancelled = errors.New("the action was cancelled")

// statusTimeout bounds a write that records how work ended after the work's
// own context was cancelled or ran out of time: long enough for a busy
// store, short enough that a hung one cannot hold a worker forever.
const statusTimeout = 10 * time.Second

// detached returns the context for recording the outcome of work whose own
// context may have ended: a timed-out action must still move its cluster out
// of DELETING. It keeps ctx's values, drops its cancellation and deadline,
// and has a short deadline of its own.
func detached(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), statusTimeout)
}

// stoppedBy marks err, returned by work run under ctx, with the reason ctx
// ended (errCancelled, context.DeadlineExceeded), so errors.Is sees it
// even when the error came through a plugin's gRPC call, which does not
// unwrap to the context's error.
func stoppedBy(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && status.Code(err) == codes.DeadlineExceeded {
		awaitDeadline(ctx)
	}
	if ctx.Err() == nil {
		return err
	}
	cause := context.Cause(ctx)
	if errors.Is(err, cause) {
		return err
	}
	return fmt.Errorf("%w: %w", cause, err)
}

// awaitDeadline waits for ctx to end when its deadline is at most a moment
// away. A plugin enforces the deadline it was sent on its own clock (gRPC
// sends it rounded, as time left), so its DeadlineExceeded can arrive just
// before ours fires; without the wait, a timed-out action would read as a
// plugin failure.
func awaitDeadline(ctx context.Context) {
	dl, ok := ctx.Deadline()
	if !ok || time.Until(dl) > time.Second {
		return
	}
	t := time.NewTimer(time.Until(dl) + 100*time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

// runAction runs one top-level action to its end.
func (e *Engine) runAction(parent context.Context, a *model.Action) {
	if a.Control == model.SignalCancel {
		e.finish(parent, a, errCancelled)
		return
	}
	timeout := time.Duration(a.Timeout) * time.Second
	if timeout <= 0 {
		timeout = time.Duration(e.cfg.DefaultTimeout) * time.Second
	}
	started := time.UnixMicro(int64(a.StartTime * 1e6))
	ctx, cancel := context.WithDeadline(parent, started.Add(timeout))
	defer cancel()
	ctx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	e.track(a.ID, func() { stop(errCancelled) })
	defer e.untrack(a.ID)
	e.event(ctx, a, "start", a.StatusReason, model.LevelInfo)
	err := stoppedBy(ctx, e.dispatch(ctx, a))
	if parent.Err() != nil && !errors.Is(err, errCancelled) {
		// The agent is stopping: leave the action RUNNING under our lease so
		// the next start reclaims it.
		return
	}
	e.finish(parent, a, err)
}

// verdict is how an action that returned err ends: its status, reason and
// event level. Cancel and timeout are told apart from failures, as Senlin's
// CANCEL and TIMEOUT results are.
func (e *Engine) verdict(ctx context.Context, a *model.Action, err error) (status, reason string, level int) {
	switch {
	case err == nil:
		reason = a.StatusReason
		if reason == "" || reason == "The action is being processed." {
			reason = "Action completed successfully."
		}
		return model.ActionSucceeded, reason, model.LevelInfo
	case errors.Is(err, errCancelled) || (errors.Is(err, context.Canceled) && e.cancelRequested(ctx, a.ID)):
		return model.ActionCancelled, "The action was cancelled.", model.LevelWarning
	case errors.Is(err, context.DeadlineExceeded):
		return model.ActionFailed, fmt.Sprintf("TIMEOUT: the action did not finish within its timeout of %d seconds.", a.Timeout), model.LevelError
	}
	return model.ActionFailed, err.Error(), model.LevelError
}

// finish records an action's result, emits its end event, releases its
// locks and wakes its parent.
func (e *Engine) finish(parent context.Context, a *model.Action, err error) {
	ctx, cancel := detached(parent)
	defer cancel()
	now := e.cfg.Now()
	a.EndTime = float64(now.UnixMicro()) / 1e6
	a.UpdatedAt = &now
	a.Owner = ""
	var level int
	a.Status, a.StatusReason, level = e.verdict(ctx, a, err)
	if a.Status != model.ActionSucceeded {
		if serr := e.store.SignalChildren(ctx, a.ID, model.SignalCancel, now); serr != nil {
			e.log.Error("cancel children", "action", a.ID, "error", serr)
		}
		if !a.IsNodeAction() { // node actions have no children nor cluster to settle
			e.cancelRunningChildren(ctx, a.ID)
			e.unstick(ctx, a)
		}
	}
	if uerr := e.store.UpdateActions(ctx, []*model.Action{a}); uerr != nil {
		e.log.Error("record action result", "action", a.ID, "error", uerr)
	}
	phase := "end"
	if a.Status != model.ActionSucceeded {
		phase = "error"
	}
	e.event(ctx, a, phase, a.StatusReason, level)
	if a.ClusterID != "" {
		_ = e.store.ReleaseClusterLock(ctx, a.ClusterID, a.ID)
	}
	if a.IsNodeAction() {
		_ = e.store.ReleaseNodeLock(ctx, a.Target, a.ID)
	}
	e.notifyParent(a.ParentID)
	e.log.Debug("action finished", "action", a.Action, "id", a.ID, "status", a.Status, "reason", a.StatusReason)
}

// cancelRunningChildren stops the children of an action that ended without
// success which this engine is running now, so a cancelled scale-out stops
// creating nodes instead of finishing the work in the background.
func (e *Engine) cancelRunningChildren(ctx context.Context, parentID string) {
	kids, err := e.store.Children(ctx, parentID)
	if err != nil {
		e.log.Error("list children to cancel", "action", parentID, "error", err)
		return
	}
	for _, k := range kids {
		if k.Terminal() {
			continue
		}
		e.mu.Lock()
		cancel := e.running[k.ID]
		e.mu.Unlock()
		if cancel != nil {
			cancel()
		}
	}
}

// transitional are the cluster statuses an action sets while it works.
var transitional = []string{model.ClusterCreating, model.ClusterUpdating, model.ClusterResizing, model.ClusterDeleting,
	model.ClusterChecking, model.ClusterRecovering, model.ClusterOperating}

// unstick leaves no cluster in a transitional status, or a cluster that was
// never created in INIT, after the action working on it failed, was
// cancelled or timed out: whatever step failed (a store write refused for a
// full disk, a deadline), the cluster ends in ERROR or in the status its
// nodes give, with the action's reason. A cluster whose lock another action
// holds is that action's to settle and is left alone.
func (e *Engine) unstick(ctx context.Context, a *model.Action) {
	if a.ClusterID == "" {
		return
	}
	held, err := e.store.AcquireClusterLock(ctx, a.ClusterID, a.ID, store.LockCluster)
	if err != nil || !held {
		return
	}
	cl, err := e.store.GetCluster(ctx, a.ClusterID)
	if err != nil {
		return // deleted, or the store is down: nothing to write to
	}
	var werr error
	switch {
	case cl.Status == model.ClusterInit && a.Action == model.ClusterCreateAction:
		werr = e.store.InTx(ctx, func(tx store.Store) error {
			return e.setClusterStatus(ctx, tx, cl.ID, model.ClusterError, "Cluster creation failed: "+a.StatusReason, nil)
		})
	case cl.Status == model.ClusterDeleting:
		werr = e.store.InTx(ctx, func(tx store.Store) error {
			return e.setClusterStatus(ctx, tx, cl.ID, model.ClusterError, "Cluster deletion failed: "+a.StatusReason, nil)
		})
	case slices.Contains(transitional, cl.Status):
		werr = e.settle(ctx, cl.ID, a.Action, nil, errors.New(a.StatusReason))
	default:
		return
	}
	if werr != nil {
		e.log.Error("record the cluster's status after its action failed", "cluster", cl.ID, "action", a.ID, "error", werr)
	}
}

func (e *Engine) cancelRequested(ctx context.Context, id string) bool {
	a, err := e.store.GetAction(ctx, id)
	return err == nil && a.Control == model.SignalCancel
}

// event records an event about an action's target.
func (e *Engine) event(ctx context.Context, a *model.Action, phase, reason string, level int) {
	ev := &model.Event{ID: uuid.NewString(), Timestamp: e.cfg.Now(), OID: a.Target, ClusterID: a.ClusterID, User: a.User, Project: a.Project,
		Action: a.Action, Status: phase, StatusReason: reason, Level: level, OType: "CLUSTER", MetaData: map[string]any{"action": a.ID}}
	if a.IsNodeAction() {
		ev.OType = "NODE"
	}
	ctx, cancel := detached(ctx)
	defer cancel()
	if err := e.store.CreateEvents(ctx, []*model.Event{ev}); err != nil {
		e.log.Error("record event", "error", err)
	}
}

func (e *Engine) dispatch(ctx context.Context, a *model.Action) error {
	switch a.Action {
	case model.ClusterCreateAction:
		return e.doClusterCreate(ctx, a)
	case model.ClusterDeleteAction:
		return e.doClusterDelete(ctx, a)
	case model.ClusterUpdateAction:
		return e.doClusterUpdate(ctx, a)
	case model.ClusterAddNodesAction:
		return e.doAddNodes(ctx, a)
	case model.ClusterDelNodesAction:
		return e.doDelNodes(ctx, a)
	case model.ClusterReplaceNodesAction:
		return e.doReplaceNodes(ctx, a)
	case model.ClusterResizeAction, model.ClusterScaleInAction, model.ClusterScaleOutAction:
		return e.doResize(ctx, a)
	case model.ClusterCheckAction:
		return e.doClusterCheck(ctx, a)
	case model.ClusterRecoverAction:
		return e.doClusterRecover(ctx, a)
	case model.ClusterAttachPolicyAction:
		return e.doAttachPolicy(ctx, a)
	case model.ClusterDetachPolicyAction:
		return e.doDetachPolicy(ctx, a)
	case model.ClusterUpdatePolicyAction:
		return e.doUpdatePolicy(ctx, a)
	case model.NodeCreateAction, model.NodeDeleteAction, model.NodeUpdateAction, model.NodeCheckAction, model.NodeRecoverAction:
		return e.doNodeRPC(ctx, a)
	}
	return fmt.Errorf("unknown action %s", a.Action)
}

// saveData persists an action's data and outputs as it goes, so a reclaimed
// action resumes where it stopped.
func (e *Engine) saveData(ctx context.Context, a *model.Action) error {
	return e.store.UpdateActions(ctx, []*model.Action{a})
}

// waitChildren waits until every child of a is terminal, then reports the
// first failure. It watches for its own cancellation too.
func (e *Engine) waitChildren(ctx context.Context, a *model.Action) error {
	ch := e.waiter(a.ID)
	defer e.dropWaiter(a.ID)
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		sum, err := e.store.SummarizeChildren(ctx, a.ID)
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

func (e *Engine) newID() string { return uuid.NewString() }

func (e *Engine) randName(format string, index int) string {
	e.rngMu.Lock()
	defer e.rngMu.Unlock()
	return NodeName(format, index, e.rng)
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
