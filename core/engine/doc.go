// Package engine runs Grove's actions: it persists requests as actions,
// claims them with leases, runs the bound policies around them, forks node
// actions and executes them in batches through the profile drivers. The
// decisions it applies (sizes, victims, restarts, update verdicts, what to
// reap) are core/orchestrator's pure functions; the engine reads the store,
// asks, and writes the answer. Files by concept, in the order a request
// meets them:
//
//   - The request side, called by core/server, checks input and queues an
//     action: submit.go (what every request shares: the caller, building
//     and storing an action, cancel, numeric bounds), submit_specs.go
//     (profiles and policies, validated by their plugin), submit_clusters.go
//     (create, update, delete a cluster), submit_cluster_actions.go (POST
//     /v1/clusters/{id}/actions: each action's typed inputs),
//     action_params.go (the rules of those actions' parameters, one by
//     one, which receivers' params are held to as well),
//     submit_nodes.go (create, update, delete a node and its actions),
//     adopt.go (adopting an existing resource as a node, and its
//     preview, through the driver's Adopter hook),
//     sets.go (ownership by definition sets, per project), auth.go
//     (tokens: making, hashing and authenticating them; host-access
//     profile types and the project grants they need), receivers.go
//     (webhook receivers: their secrets, hashed as tokens are, and the
//     cluster action a trigger starts), errors.go (the API's error kinds).
//   - Running: engine.go (the Engine, its Config, Start and Stop),
//     workers.go (workers claiming actions, lease renewal), run.go (one
//     action from claim to its recorded end: dispatch to its handler, the
//     verdict for cancel and timeout, finish, unsticking its cluster),
//     wait.go (waiting for children, locks and time), inputs.go (decoding
//     an action's typed inputs and data).
//   - Cluster handlers: stages.go (the plumbing every handler uses: the
//     cluster lock, policy BEFORE/AFTER checks, stages recorded in the
//     action's data so a resumed action redoes nothing, forking node
//     actions, settling the cluster's status), lifecycle.go (create,
//     update, delete), sizing.go (resize, scale-out and scale-in: the plan
//     the orchestrator decides, applying it, restoring capacity),
//     membership.go (add, delete and replace nodes; joining and leaving),
//     hooks.go (a deletion policy's lifecycle hook: node deletions held
//     until complete_lifecycle or the hook's timeout),
//     check_recover.go (cluster check and recover), update.go (the rolling
//     update of a profile change), policy.go (the policy pipeline and
//     attach, detach, update of bindings), placement.go (the host
//     snapshot a placement policy's checks read, and a cluster's
//     placement ranking), operations.go (node and
//     cluster operations: checking a request against the profile type's
//     operations, CLUSTER_OPERATION forking NODE_OPERATION, the driver
//     call), runstate.go (a cluster's start, stop, restart and refresh:
//     its run state kept in its data, its nodes' workloads stopped and
//     started through the profile type's own node operations),
//     dependencies.go (dependencies between clusters at run time: the
//     graph read from the store, core/orchestrator/deps's decisions carried
//     out as stop and start actions, faults and recoveries from the health
//     round, waiting clusters started, cycles put in maintenance,
//     milestones entered), instance_commands.go (freeze, thaw and clear
//     of a failover or flex cluster's instances: core/orchestrator/
//     monitor's Command applied to each host's instance row, lost
//     versioned writes retried), expect.go (start, stop, switch and
//     giveback of a failover or flex cluster: the expectation its
//     instance monitors honour, written by the action and cleared by the
//     monitor round that sees it reached or failed).
//   - Node work: node_actions.go (batches of derived node actions, and a
//     node action a user asked for), drivers.go (the batch calls to a
//     profile's driver and the node rows they update), ports.go (ports for
//     process nodes), secrets.go (sensitive property values: sealed before
//     they are stored, opened only for a plugin, redacted for the API,
//     sealed at start-up when an older Grove stored them in clear).
//   - In the background: health.go (periodic checks, driver events,
//     restart supervision), checkreads.go (what a round last read of each
//     cluster's nodes, kept while the cluster's node generation stays
//     put), hosts.go (this agent's host: heartbeats,
//     marking late hosts down, the operator's availability, which host a
//     local.process node goes to, moving nodes off down and draining
//     hosts), global.go (global clusters: one node per eligible host,
//     from the pure global-mode decision, on the health round),
//     failover.go (failover and flex clusters: each agent host runs the instance
//     monitor on the health round and applies its own step; the
//     instances a cluster GET shows),
//     healthpolicy.go (what a bound health policy
//     changes: interval, detection modes, polling a URL per node, the
//     recovery action), reconcile.go (nodes left mid-operation at
//     start-up), reaper.go (retention of finished actions and events).
//   - Watching: metrics.go (the engine's Prometheus metrics, and the
//     logger that names an action and its cluster on each of its lines).
//   - Pure helpers: decide.go (Senlin's eval_status and node names).
package engine
