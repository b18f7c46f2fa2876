package cli

import (
	"context"
	"fmt"
)

// waitHelp says what a wait shows and what Ctrl-C does to it.
const waitHelp = "With -wait, the action's progress is shown on stderr: redrawn in place on a\n" +
	"terminal, a line at each change otherwise. Ctrl-C stops waiting, not the\n" +
	"action: it says how to follow the action, and exits 130."

// healthHelp says how a cluster's creation is judged once it succeeded.
const healthHelp = "Once the cluster is created, its nodes are watched for their first health\n" +
	"check (-health-watch): a node that fails it fails the command (exit 1)."

// pageHelp says how the lists that grow with every action page.
const pageHelp = "Newest first, 20 at a time (-limit): when more exist, the command for the\n" +
	"next page (-marker) is printed on stderr."

// commands is the command table, in the order `grove -h` and docs/cli.md
// list them. Adding a command is one entry: its words, its arguments, a
// sentence, and a func(ctx, env, args) error that parses its flags with
// flagSet(name, newGlobals(env)) first (see entry). An entry without run
// is a parent: it lists its subcommands and refuses unknown ones.
func commands() []*entry {
	return []*entry{
		{name: "quickstart", args: "[options]", synopsis: "Bring up a 3-node local.process cluster on an embedded agent and show its nodes.",
			help: "Press Ctrl-C to stop; the cluster is destroyed unless -keep is given.", run: runQuickstart},
		{name: "agent", args: "-dev | -config FILE [options]", synopsis: "Run a Grove agent (the API, the engine and the plugins).", run: runAgent},
		{name: "monitor", args: "[options]", synopsis: "Stream the agent's log lines and its events as they are written (admin).",
			help: "Log lines come at -log-level or above, even below the agent's own level;\n" +
				"with -json, log lines and events are JSON objects, one a line. Lines the\n" +
				"terminal takes too slowly are dropped and counted on stderr. Ctrl-C stops.", run: runMonitor},

		{name: "validate", args: "[options] [PATH]", synopsis: "Check HCL service definitions: syntax, references, settings and plugin schemas.",
			help: "PATH is a .hcl file or a directory of them (default: the current directory).", run: runValidate},
		{name: "plan", args: "[options] [PATH]", synopsis: "Show what applying HCL service definitions would change on the agent.", run: runPlan},
		{name: "apply", args: "[options] [PATH | PLANFILE]", synopsis: "Apply HCL service definitions (or a saved plan) to the agent.",
			help: "Each action's progress is shown as it runs. Then the nodes of the clusters\n" +
				"the apply created are watched for their first health check (-health-watch):\n" +
				"a node that fails it fails the apply (exit 1). Ctrl-C stops waiting, not the\n" +
				"action: it says which action goes on, and exits 130.", run: runApply},
		{name: "destroy", args: "[options] [PATH]", synopsis: "Destroy everything a definition set owns.", run: runDestroy},
		{name: "fmt", args: "[options] [PATH...]", synopsis: "Rewrite HCL service definitions in the canonical format.", run: runFmt},

		{name: "profile", synopsis: "Manage profiles: create, list, show, update, delete, validate, types, hosts."},
		{name: "profile create", args: "-spec-file FILE [options] NAME", synopsis: "Create a profile from a YAML or JSON spec.", run: verbCmd(specCreate(profileRes))},
		{name: "profile list", args: "[options]", synopsis: "List profiles.", run: verbCmd(listVerb(profileRes, filter{flag: "name", param: "name", help: "only those with this name"}, filter{flag: "type", param: "type", help: "only those of this type, e.g. local.process"}))},
		{name: "profile show", args: "[options] PROFILE", synopsis: "Show a profile by id, name or short id.", run: verbCmd(showVerb(profileRes))},
		{name: "profile update", args: "-name NEW [options] PROFILE", synopsis: "Rename a profile.", run: verbCmd(renameVerb(profileRes))},
		{name: "profile delete", args: "[options] PROFILE...", synopsis: "Delete profiles no cluster or node uses.", run: verbCmd(deleteVerb(profileRes, false))},
		{name: "profile validate", args: "-spec-file FILE [options]", synopsis: "Check a profile spec against its type's schema without creating it.", run: verbCmd(specValidate(profileRes))},
		{name: "profile types", args: "[options] [TYPE]", synopsis: "List the profile types the plugins offer, or show one's schema.", run: verbCmd(typesVerb("profile"))},
		{name: "profile hosts", args: "[options] TYPE", synopsis: "List where a profile type's driver can place nodes.", run: verbCmd(profileHosts)},

		{name: "policy", synopsis: "Manage policies: create, list, show, update, delete, validate, types."},
		{name: "policy create", args: "-spec-file FILE [options] NAME", synopsis: "Create a policy from a YAML or JSON spec.", run: verbCmd(specCreate(policyRes))},
		{name: "policy list", args: "[options]", synopsis: "List policies.", run: verbCmd(listVerb(policyRes, filter{flag: "name", param: "name", help: "only those with this name"}, filter{flag: "type", param: "type", help: "only those of this type"}))},
		{name: "policy show", args: "[options] POLICY", synopsis: "Show a policy by id, name or short id.", run: verbCmd(showVerb(policyRes))},
		{name: "policy update", args: "-name NEW [options] POLICY", synopsis: "Rename a policy.", run: verbCmd(renameVerb(policyRes))},
		{name: "policy delete", args: "[options] POLICY...", synopsis: "Delete policies no cluster has attached.", run: verbCmd(deleteVerb(policyRes, false))},
		{name: "policy validate", args: "-spec-file FILE [options]", synopsis: "Check a policy spec against its type's schema without creating it.", run: verbCmd(specValidate(policyRes))},
		{name: "policy types", args: "[options] [TYPE]", synopsis: "List the policy types the plugins offer, or show one's schema.", run: verbCmd(typesVerb("policy"))},

		{name: "placement", synopsis: "Ask where nodes would go: simulate a placement decision on a snapshot."},
		{name: "placement simulate", args: "-f SNAPSHOT.json [options]", synopsis: "Rank a snapshot's hosts for a placement policy and print the decision, touching no cluster.",
			help: placementHelp + "\n\nA snapshot with a monitor object also runs the failover instance monitor:\n" +
				"each host's status, monitor state and flags, its next state, the action\n" +
				"it takes (start, stop, freeze, thaw or none) and why (docs/failover.md).", run: runPlacementSimulate},

		{name: "cluster", synopsis: "Manage clusters and run cluster actions.",
			help: "Every subcommand that takes a CLUSTER accepts its name, id or short id."},
		{name: "cluster create", args: "-profile PROFILE [options] NAME", synopsis: "Create a cluster of nodes from a profile.",
			help: waitHelp + "\n\n" + healthHelp, run: verbCmd(clusterCreate)},
		{name: "cluster list", args: "[options]", synopsis: "List clusters.", run: verbCmd(listVerb(clusterRes, filter{flag: "name", param: "name", help: "only those with this name"}, filter{flag: "status", param: "status", help: "only those in this status, e.g. ACTIVE"}))},
		{name: "cluster show", args: "[options] CLUSTER", synopsis: "Show a cluster.", run: verbCmd(showVerb(clusterRes))},
		{name: "cluster status", args: "[options] CLUSTER", synopsis: "Show desired against actual, each node's health and restarts, and a rolling update in progress.", run: verbCmd(clusterStatus)},
		{name: "cluster update", args: "[options] CLUSTER", synopsis: "Change a cluster's name, profile (a rolling update), sizes, timeout or metadata.", run: verbCmd(clusterUpdate)},
		{name: "cluster update-resume", args: "[options] CLUSTER", synopsis: "Resume a paused rolling update.", run: verbCmd(clusterSimple("update_resume"))},
		{name: "cluster update-rollback", args: "[options] CLUSTER", synopsis: "Roll a paused update back to the old profile.", run: verbCmd(clusterSimple("update_rollback"))},
		{name: "cluster delete", args: "[options] CLUSTER...", synopsis: "Delete clusters and their nodes.", run: verbCmd(deleteVerb(clusterRes, true))},
		{name: "cluster resize", args: "(-capacity N | -adjustment N | -percentage P) [options] CLUSTER", synopsis: "Resize a cluster to a size, by a number of nodes or by a percentage.", run: verbCmd(clusterResize)},
		{name: "cluster scale-out", args: "[options] CLUSTER", synopsis: "Add nodes to a cluster.", run: verbCmd(clusterScale("scale_out"))},
		{name: "cluster scale-in", args: "[options] CLUSTER", synopsis: "Remove nodes from a cluster.", run: verbCmd(clusterScale("scale_in"))},
		{name: "cluster add-nodes", args: "[options] CLUSTER NODE...", synopsis: "Adopt orphan nodes into a cluster.", run: verbCmd(clusterNodes("add_nodes"))},
		{name: "cluster del-nodes", args: "[options] CLUSTER NODE...", synopsis: "Remove nodes from a cluster, keeping them as orphans unless -destroy.", run: verbCmd(clusterNodes("del_nodes"))},
		{name: "cluster replace-nodes", args: "[options] CLUSTER OLD=NEW...", synopsis: "Swap cluster nodes for orphan nodes.", run: verbCmd(clusterReplace)},
		{name: "cluster check", args: "[options] CLUSTER", synopsis: "Check the health of every node of a cluster.", run: verbCmd(clusterSimple("check"))},
		{name: "cluster start", args: "[options] CLUSTER", synopsis: "Start a stopped cluster's nodes again.", help: expectStartHelp, run: verbCmd(clusterSimple("start"))},
		{name: "cluster stop", args: "[options] CLUSTER", synopsis: "Stop a cluster's nodes, keeping them; the health loop leaves it alone until it starts.", help: expectStopHelp, run: verbCmd(clusterSimple("stop"))},
		{name: "cluster restart", args: "[options] CLUSTER", synopsis: "Stop a cluster's nodes and start them again.", run: verbCmd(clusterSimple("restart"))},
		{name: "cluster refresh", args: "[options] CLUSTER", synopsis: "Tell a cluster's dependents with restart_on refresh that it changed.", run: verbCmd(clusterSimple("refresh"))},
		{name: "cluster freeze", args: "[-host HOST] [options] CLUSTER", synopsis: "Freeze a failover or flex cluster's instances: the monitor neither starts nor restarts them.",
			help: freezeHelp, run: verbCmd(clusterInstanceCommand("freeze"))},
		{name: "cluster thaw", args: "[-host HOST] [options] CLUSTER", synopsis: "Thaw a failover or flex cluster's frozen instances: automatic orchestration resumes.",
			help: freezeHelp, run: verbCmd(clusterInstanceCommand("thaw"))},
		{name: "cluster clear", args: "[-host HOST] [options] CLUSTER", synopsis: "Clear a failover or flex cluster's instances: back to idle, restarts counted from zero.",
			help: "Clear is refused for an instance whose monitor is in an action (a state\n" +
				"ending in -ing): the action fails naming it. Without -host, every instance\n" +
				"of the cluster is cleared. See docs/failover.md.", run: verbCmd(clusterInstanceCommand("clear"))},
		{name: "cluster switch", args: "-host HOST [options] CLUSTER", synopsis: "Move a failover cluster to a host: its up instance stops, then the host starts it.",
			help: "The host must be able to take the cluster now: ranked by its placement,\n" +
				"up, not frozen, not in start failed or stop failed; otherwise the command\n" +
				"is refused naming the host and why. With -wait, the command waits until\n" +
				"the cluster runs on the host. See docs/failover.md.", run: verbCmd(clusterSwitch)},
		{name: "cluster giveback", args: "[options] CLUSTER", synopsis: "Move a failover or flex cluster back to its placement's preferred hosts.",
			help: "Instances off the preferred hosts (the placement's leader; for flex, the\n" +
				"first flex_target candidates) stop, then the preferred hosts start. With\n" +
				"-wait, the command waits until that is done. See docs/failover.md.", run: verbCmd(clusterSimple("giveback"))},
		{name: "cluster op", args: "[options] CLUSTER OPERATION", synopsis: "Run a node operation on every node of a cluster, or on those -filter matches.", run: verbCmd(clusterOp)},
		{name: "cluster recover", args: "[options] CLUSTER", synopsis: "Recover a cluster's unhealthy nodes.", run: verbCmd(clusterRecover)},
		{name: "cluster complete-lifecycle", args: "[options] CLUSTER TOKEN", synopsis: "Let a node removal a deletion policy's lifecycle hook holds go on.", run: verbCmd(clusterCompleteLifecycle)},
		{name: "cluster placement", args: "[options] CLUSTER", synopsis: "Show how the cluster's placement policy ranks the hosts for its next node.",
			help: placementHelp, run: verbCmd(clusterPlacement)},
		{name: "cluster policies", args: "[options] CLUSTER", synopsis: "List the policies attached to a cluster.", run: verbCmd(clusterPolicies)},
		{name: "cluster policy-attach", args: "[options] CLUSTER POLICY", synopsis: "Attach a policy to a cluster.", run: verbCmd(clusterPolicy("policy_attach"))},
		{name: "cluster policy-detach", args: "[options] CLUSTER POLICY", synopsis: "Detach a policy from a cluster.", run: verbCmd(clusterPolicy("policy_detach"))},
		{name: "cluster policy-update", args: "[options] CLUSTER POLICY", synopsis: "Enable, disable or reorder a cluster's policy.", run: verbCmd(clusterPolicy("policy_update"))},
		{name: "cluster deps", args: "[-set FILE] [options] CLUSTER", synopsis: "Show a cluster's dependencies, its dependents and who requires it; -set replaces what it declares.",
			help: "FILE is JSON: {\"groups\": [{\"name\": \"database\", \"grouping\": \"require_all\",\n" +
				"\"restart_on\": \"error\", \"members\": [\"db\"]}], \"dependents\": [...]}. A declaration\n" +
				"that would close a cycle is refused, naming it. See docs/dependencies.md.", run: verbCmd(clusterDeps)},

		{name: "node", synopsis: "Manage nodes: create, list, show, update, delete, check, recover."},
		{name: "node create", args: "-profile PROFILE [options] NAME", synopsis: "Create a node, alone or in a cluster.", run: verbCmd(nodeCreate)},
		{name: "node adopt", args: "-type TYPE [options] IDENTITY", synopsis: "Adopt an existing resource (a container, a process, a Nova server, a vSphere VM) as an orphan node.", run: verbCmd(nodeAdopt)},
		{name: "node list", args: "[options]", synopsis: "List nodes; with -cluster, in index order.", run: verbCmd(listVerb(nodeRes, clusterFilter, filter{flag: "name", param: "name", help: "only those with this name"}, filter{flag: "status", param: "status", help: "only those in this status, e.g. ACTIVE"}))},
		{name: "node show", args: "[options] NODE", synopsis: "Show a node by id, name or short id.", run: verbCmd(showVerb(nodeRes))},
		{name: "node update", args: "[options] NODE", synopsis: "Change a node's name, profile, role or taint.", run: verbCmd(nodeUpdate)},
		{name: "node delete", args: "[options] NODE...", synopsis: "Delete nodes.", run: verbCmd(deleteVerb(nodeRes, true))},
		{name: "node check", args: "[options] NODE", synopsis: "Check a node's health.", run: verbCmd(nodeAction("check"))},
		{name: "node op", args: "[options] NODE OPERATION", synopsis: "Run one of the node's profile type's operations (such as stop, start or power_off).", run: verbCmd(nodeOp)},
		{name: "node recover", args: "[options] NODE", synopsis: "Recover a node.", run: verbCmd(nodeAction("recover"))},

		{name: "action", synopsis: "Inspect, wait for and cancel actions."},
		{name: "action list", args: "[options]", synopsis: "List actions.", help: pageHelp, run: verbCmd(listVerb(actionRes, clusterFilter,
			filter{flag: "name", param: "name", help: "only those with this name"}, filter{flag: "target", param: "target", help: "only those on this cluster or node id"},
			filter{flag: "action", param: "action", help: "only this kind, e.g. CLUSTER_RESIZE"}, filter{flag: "status", param: "status", help: "only those in this status, e.g. RUNNING"}))},
		{name: "action show", args: "[options] ACTION", synopsis: "Show an action.", run: verbCmd(showVerb(actionRes))},
		{name: "action wait", args: "[options] ACTION", synopsis: "Follow an action to its end.",
			help: "The action's progress is shown on stderr. Ctrl-C stops waiting, not the\n" +
				"action (exit 130). Following a cluster's creation, its nodes are then\n" +
				"watched for their first health check (-health-watch): a node that fails it\n" +
				"fails the command (exit 1).", run: verbCmd(actionWait)},
		{name: "action cancel", args: "[options] ACTION", synopsis: "Cancel an action.", run: verbCmd(actionCancel)},

		{name: "event", synopsis: "List and show events."},
		{name: "event list", args: "[options]", synopsis: "List events, or follow them as they are written.", help: pageHelp + "\n\n" + followHelp, run: verbCmd(listVerb(eventRes, clusterFilter,
			filter{flag: "object-id", param: "oid", help: "only those about this object id", old: "oid"},
			objectNameFilter,
			filter{flag: "object-type", param: "otype", help: "only those about objects of this type: CLUSTER, NODE or ACTION", old: "otype"},
			filter{flag: "action", param: "action", help: "only those of this action kind, e.g. CLUSTER_CREATE"},
			filter{flag: "level", param: "level", help: "only those of this level, e.g. ERROR"}))},
		{name: "event show", args: "[options] EVENT", synopsis: "Show an event.", run: verbCmd(showVerb(eventRes))},

		{name: "receiver", synopsis: "Manage receivers, webhooks that start a cluster action: create, list, show, delete."},
		{name: "receiver create", args: "-cluster CLUSTER -action ACTION [options] NAME", synopsis: "Create a webhook receiver; its URL is shown once.", run: verbCmd(receiverCreate)},
		{name: "receiver list", args: "[options]", synopsis: "List receivers.", run: verbCmd(listVerb(receiverRes, clusterFilter,
			filter{flag: "name", param: "name", help: "only those with this name"}, filter{flag: "action", param: "action", help: "only those starting this action, e.g. CLUSTER_SCALE_OUT"}))},
		{name: "receiver show", args: "[options] RECEIVER", synopsis: "Show a receiver by id, name or short id (never its webhook URL).", run: verbCmd(showVerb(receiverRes))},
		{name: "receiver delete", args: "[options] RECEIVER...", synopsis: "Delete receivers; their webhook URLs are refused from then on.", run: verbCmd(deleteVerb(receiverRes, false))},

		{name: "milestone", synopsis: "Manage milestones, named sets of clusters that dependencies can name: create, list, show, enter, delete."},
		{name: "milestone create", args: "[-cluster CLUSTER]... [options] NAME", synopsis: "Create a milestone of clusters.", run: verbCmd(milestoneCreate)},
		{name: "milestone list", args: "[options]", synopsis: "List milestones.", run: verbCmd(listVerb(milestoneRes, filter{flag: "name", param: "name", help: "only those with this name"}))},
		{name: "milestone show", args: "[options] MILESTONE", synopsis: "Show a milestone by id, name or short id.", run: verbCmd(showVerb(milestoneRes))},
		{name: "milestone enter", args: "[-wait] [options] MILESTONE|all|none", synopsis: "Bring up a milestone's clusters and what they depend on, and stop every other cluster, leaves first.", run: verbCmd(milestoneEnter)},
		{name: "milestone delete", args: "[options] MILESTONE...", synopsis: "Delete milestones no dependency group names.", run: verbCmd(deleteVerb(milestoneRes, false))},

		{name: "deps", synopsis: "Work with dependencies between clusters without an agent."},
		{name: "deps simulate", args: "-f FILE [options]", synopsis: "Evaluate a dependency graph and an event: what may start, and what starts and stops.",
			help: "FILE is JSON: {\"clusters\": [...], \"milestones\": {...}, \"paths\": {...}, \"event\": {...}}\n" +
				"(docs/dependencies.md). Nothing is sent to an agent.", run: verbCmd(depsSimulate)},

		{name: "host", synopsis: "Inspect hosts (agents and the hosts drivers report) and set their availability: list, show, update."},
		{name: "host list", args: "[options]", synopsis: "List hosts: kind, state, availability, nodes, load and labels.", run: verbCmd(hostList)},
		{name: "host show", args: "[options] HOST", synopsis: "Show a host.", run: verbCmd(hostShow)},
		{name: "host update", args: "[options] HOST", synopsis: "Set a host's availability (active, pause, drain) or operator labels (admin).",
			help: "Draining a host moves its local.process nodes to other hosts, each\n" +
				"replacement started before the node it replaces is deleted; pause keeps\n" +
				"the host's nodes and gives it no new ones; active undoes both.", run: verbCmd(hostUpdate)},

		{name: "plugin", synopsis: "Serve, describe, inspect and start plugins (plugin init writes a new one)."},
		{name: "plugin list", args: "[options]", synopsis: "List the agent's plugins, their state and restarts.", run: pluginList},
		{name: "plugin info", args: "[options] NAME", synopsis: "Show one of the agent's plugins.", run: pluginInfo},
		{name: "plugin init", args: "[options] NAME", synopsis: "Write a new plugin from Grove's template: module, main, a profile or policy skeleton, its conformance test, a GNUmakefile and a release config.", run: runPluginInit},
		{name: "plugin describe", synopsis: "Print the built-in plugin's description as JSON.", run: pluginDescribe, noFlags: true},
		{name: "plugin serve", args: "[describe]", synopsis: "Serve the built-in plugins over go-plugin (the agent runs this).", run: pluginServe, noFlags: true},

		{name: "token", synopsis: "Manage API tokens: create, list, show, revoke (admin)."},
		{name: "token create", args: "-project PROJECT -role ROLE [options]", synopsis: "Create a token; its secret is shown once.", run: verbCmd(tokenCreate)},
		{name: "token list", args: "[options]", synopsis: "List tokens.", run: verbCmd(tokenList)},
		{name: "token show", args: "[options] TOKEN", synopsis: "Show a token (never its secret).", run: verbCmd(tokenShow)},
		{name: "token revoke", args: "[options] TOKEN...", synopsis: "Revoke tokens; the agent refuses them from then on.", run: verbCmd(tokenRevoke)},

		{name: "project", synopsis: "Grant projects host-access profile types: allow, deny, grants (admin)."},
		{name: "project allow", args: "[options] PROJECT TYPE", synopsis: "Let a project use a host-access profile type.", run: verbCmd(projectGrant(true))},
		{name: "project deny", args: "[options] PROJECT TYPE", synopsis: "Withdraw a project's grant of a profile type.", run: verbCmd(projectGrant(false))},
		{name: "project grants", args: "[options] PROJECT", synopsis: "List the profile types a project is granted.", run: verbCmd(projectGrants)},

		{name: "version", synopsis: "Print the version.", noFlags: true, run: func(_ context.Context, env *Env, _ []string) error {
			fmt.Fprintln(env.Stdout, "grove", version())
			return nil
		}},
		{name: "demo-http", synopsis: "Serve a small HTTP page on $GROVE_NODE_PORT (used by the quick start's nodes).", run: runDemoHTTP, noFlags: true},
		{name: "demo-image", args: "[options]", synopsis: "Import a static grove binary into the engine at $DOCKER_HOST as the demo image (make demo-image).", run: runDemoImage},
	}
}
