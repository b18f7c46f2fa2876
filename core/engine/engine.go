package engine

import (
	"context"
	crand "crypto/rand"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/google/uuid"
	"github.com/hashicorp/go-hclog"

	"github.com/grovehq/grove/core/ids"
	"github.com/grovehq/grove/core/orchestrator/deps"
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
	// ForkPart is how many nodes a cluster's creation forks per
	// transaction (default 1000, four batches of NodeBatch): the workers
	// start on a part's children while the next part is forked.
	ForkPart int
	// Lease is how long a claim lasts without renewal (default 30s).
	Lease time.Duration
	// Poll is how often idle workers look for work other agents queued
	// (default 500ms); work queued by this agent wakes them at once.
	Poll time.Duration
	// MaxNodesPerCluster bounds cluster sizes (default 100000, the size BenchmarkCreateCurve creates, reads and checks).
	MaxNodesPerCluster int
	// DefaultTimeout is the default action timeout in seconds (default 3600).
	DefaultTimeout int
	// CheckInterval is how often every cluster's nodes are checked; a
	// negative value turns health checks off (default 5s).
	CheckInterval time.Duration
	// CheckBatchNodes and CheckBatchBytes bound one health-check call to a
	// driver; a cluster's nodes are checked in as many calls as that takes
	// (zero or less: sdk.DefaultBatchNodes and sdk.DefaultBatchBytes).
	CheckBatchNodes, CheckBatchBytes int
	// CheckCalls is how many of a cluster's health-check calls run at
	// once (default 4); CheckCallTimeout bounds each (default 1m), so a
	// call that hangs fails its own nodes, not the round.
	CheckCalls       int
	CheckCallTimeout time.Duration
	// Retention is how many finished actions and events are kept per
	// cluster and per node; negative keeps everything (default 50).
	Retention int
	// ReapInterval is how often the reaper runs (default 1m).
	ReapInterval time.Duration
	// IgnoreDriverEvents turns off following the drivers' node events.
	IgnoreDriverEvents bool
	// AfterDependencyStep is a test-only hook: called after each step of a
	// dependency cascade (a propagation, an admin stop's dependents, a
	// milestone) has ended, it lets a test kill the engine between two
	// steps. Leave it nil.
	AfterDependencyStep func(step deps.Step)
	// Dev is dev mode: project "default" holds every host-access grant,
	// so the quick start's local.process cluster needs no admin step.
	Dev bool
	// Now is the clock (default time.Now).
	Now func() time.Time
	// SecretsKey encrypts sensitive property values in the store
	// (SecretsKeySize bytes, see LoadSecretsKey). Without one the engine
	// makes a key that lives as long as it does: enough for tests, never
	// for an agent, whose stored secrets must open after a restart.
	SecretsKey []byte
	// Metrics receives the engine's metrics (none when nil).
	Metrics *Metrics
	// HostName makes the engine a host: it heartbeats a host of this
	// name, runs the actions of host-local nodes (local.process) placed
	// on it and only those. Empty: not a host (tests, a lone agent of an
	// older configuration).
	HostName string
	// HostLabels are the host's reported labels.
	HostLabels map[string]string
	// HeartbeatInterval is how often the host heartbeats (default 5s).
	HeartbeatInterval time.Duration
	// HostDownTimeout is how old a host's last heartbeat may be before
	// it is marked down and its host-local nodes are moved (default 30s).
	HostDownTimeout time.Duration
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
	if c.ForkPart <= 0 {
		c.ForkPart = 1000
	}
	if c.Lease <= 0 {
		c.Lease = 30 * time.Second
	}
	if c.Poll <= 0 {
		c.Poll = 500 * time.Millisecond
	}
	if c.MaxNodesPerCluster <= 0 {
		c.MaxNodesPerCluster = 100000
	}
	if c.DefaultTimeout <= 0 {
		c.DefaultTimeout = 3600
	}
	if c.CheckInterval == 0 {
		c.CheckInterval = 5 * time.Second
	}
	if c.CheckCalls <= 0 {
		c.CheckCalls = 4
	}
	if c.CheckCallTimeout <= 0 {
		c.CheckCallTimeout = time.Minute
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
	if c.HeartbeatInterval <= 0 {
		c.HeartbeatInterval = 5 * time.Second
	}
	if c.HostDownTimeout <= 0 {
		c.HostDownTimeout = 30 * time.Second
	}
}

// Engine runs actions.
type Engine struct {
	cfg     Config
	store   store.Store
	plugins Plugins
	log     hclog.Logger
	secrets *secrets
	ports   *portAllocator

	wakeCluster chan struct{}
	wakeNode    chan struct{}
	healthNow   chan struct{}

	mu      sync.Mutex
	running map[string]context.CancelFunc // actions this engine runs
	waiters map[string]chan struct{}      // parents waiting for children
	// healthLast is when each cluster under a health policy was last
	// checked, for the policy's interval.
	healthLast map[string]time.Time
	// checks keeps what health rounds read of each cluster's nodes.
	checks *checkReads
	rngMu  sync.Mutex
	rng    *rand.Rand
	// ids makes the ids of nodes, actions and events.
	ids *ids.Source

	// suspects are nodes a driver reported down since the last health round.
	suspectMu sync.Mutex
	suspects  map[string]struct{}

	// lastBeat is this engine's last heartbeat of its host.
	beatMu   sync.Mutex
	lastBeat time.Time
	// joined is when this agent started as a host: its instance
	// monitors' rejoin grace runs from here.
	joined time.Time
	// wakes are the instants wakeHealthAt has a timer armed for, by
	// UnixNano: the rounds that see one grace running arm one timer for
	// its end.
	wakeMu sync.Mutex
	wakes  map[int64]struct{}

	wg     sync.WaitGroup
	cancel context.CancelFunc
	// bg is the context of the engine's loops, which work started in the
	// background (a dependency's propagation) runs in: Stop ends it.
	bg context.Context

	// cascades counts, per project, the dependency cascades this engine is
	// carrying out: the health round's reconciliation leaves a project
	// alone while one is under way.
	cascadeMu sync.Mutex
	cascades  map[string]int
	// cascadesBegun counts, per project, the cascades this engine ever
	// began there, so that a look at the graph can tell whether one began
	// while it read the graph.
	cascadesBegun map[string]uint64
	// cascadeTail is, per project, the event-driven cascade this engine
	// began there last (cascadeInBackground): the next one waits until it
	// closes. cascadesQueued counts the ones waiting.
	cascadeTail    map[string]chan struct{}
	cascadesQueued map[string]int
}

// New returns an engine; call Start to run workers.
func New(s store.Store, p Plugins, log hclog.Logger, cfg Config) *Engine {
	cfg.defaults()
	sec, err := newSecrets(cfg.SecretsKey)
	if err != nil {
		// An agent checks its key with LoadSecretsKey before; a test
		// without one gets a key of its own.
		if len(cfg.SecretsKey) > 0 {
			log.Error("the configured secrets key is unusable; using a key that lasts as long as this engine", "error", err)
		}
		key := make([]byte, SecretsKeySize)
		_, _ = crand.Read(key)
		sec, _ = newSecrets(key)
	}
	return &Engine{
		cfg: cfg, store: s, plugins: p, log: log, ports: newPortAllocator(), secrets: sec,
		wakeCluster: make(chan struct{}, 1), wakeNode: make(chan struct{}, 1), healthNow: make(chan struct{}, 1), healthLast: map[string]time.Time{},
		wakes:   map[int64]struct{}{},
		running: map[string]context.CancelFunc{}, waiters: map[string]chan struct{}{}, suspects: map[string]struct{}{}, cascades: map[string]int{}, cascadesBegun: map[string]uint64{},
		cascadeTail: map[string]chan struct{}{}, cascadesQueued: map[string]int{},
		checks: newCheckReads(),
		rng:    rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64())),
		ids:    ids.NewSource(),
	}
}

// ID returns the engine id.
func (e *Engine) ID() string { return e.cfg.EngineID }

// Store returns the engine's store.
func (e *Engine) Store() store.Store { return e.store }

// Start reclaims what a previous run left and starts the workers.
func (e *Engine) Start(ctx context.Context) error {
	// Before any work: specs stored in plain text by an older Grove are
	// encrypted now, not whenever they are next used.
	sealed, err := e.SealStored(ctx)
	if err != nil {
		return fmt.Errorf("encrypt stored sensitive values at start-up: %w", err)
	}
	if sealed > 0 {
		e.log.Info("encrypted the sensitive values of stored profiles and policies", "count", sealed)
	}
	n, err := e.store.ReclaimActions(ctx, e.cfg.EngineID, e.cfg.Now())
	if err != nil {
		return fmt.Errorf("reclaim actions at start-up: %w", err)
	}
	if n > 0 {
		e.log.Info("reclaimed unfinished actions", "count", n)
	}
	if e.isHost() {
		e.joined = e.cfg.Now()
		// Before any work, so this agent's host takes nodes at once.
		if err := e.heartbeat(ctx); err != nil {
			return fmt.Errorf("record this agent's host %s at start-up: %w", e.cfg.HostName, err)
		}
	}
	if err := e.reconcileNodes(ctx); err != nil {
		return fmt.Errorf("reconcile nodes at start-up: %w", err)
	}
	ctx, e.cancel = context.WithCancel(context.Background())
	e.bg = ctx
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
	if e.cfg.CheckInterval <= 0 {
		// Without a health loop, whose first round does it, a cascade a
		// crash cut short is finished once at start-up.
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			if err := e.reconcileDependencies(ctx); err != nil && ctx.Err() == nil {
				e.log.Warn("dependency reconciliation at start-up", "error", err)
			}
		}()
	}
	if e.isHost() {
		e.wg.Add(1)
		go e.hostLoop(ctx)
	}
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
	// A clean stop is maintenance, not a failure: the host's nodes stay
	// where they are, neither checked nor moved, until the agent is back.
	if e.isHost() {
		if err := e.enterMaintenance(ctx); err != nil {
			e.log.Warn("put this agent's host in maintenance", "host", e.cfg.HostName, "error", err)
		}
	}
}

// newID returns a random id, for what is made one at a time (clusters,
// profiles, policies, receivers, tokens): none can be guessed from
// another's.
func (e *Engine) newID() string { return uuid.NewString() }

// rowID returns an id that follows creation (core/ids), for what is made
// by the thousand: nodes, actions and events.
func (e *Engine) rowID() string { return e.ids.New() }

func (e *Engine) randName(format string, index int) string {
	e.rngMu.Lock()
	defer e.rngMu.Unlock()
	return NodeName(format, index, e.rng)
}
