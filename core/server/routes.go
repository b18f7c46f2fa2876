package server

import (
	"net/http"

	"github.com/grovehq/grove/core/server/ui"
)

// routes is the API's route table. Each resource's handlers live in the
// file named for it: profiles.go, policies.go, clusters.go,
// cluster_actions.go, cluster_policies.go, operations.go, nodes.go, actions.go,
// attrs.go, dependencies.go (dependencies and milestones), milestone_enter.go, receivers.go, services.go, hosts.go, events.go, sets.go, types.go, plugins.go, tokens.go and version.go.
//
// handle registers a route any token of the project may read and a member
// or admin may write; public needs no token; admin needs an admin token.
// TestRouteAccess holds a case for every route registered here. A write
// takes no query parameters unless its options say so (withQuery,
// anyQuery), and noBody marks a write that reads no body (inputs.go).
func (s *Server) routes() {
	s.public("GET /{$}", s.versions)
	s.public("GET /v1/health", s.health)
	s.handle("GET /v1/{$}", s.version)
	s.handle("GET /v1/build-info", s.buildInfo)
	s.admin("GET /v1/services", s.listServices)
	s.handle("GET /v1/profile-types", s.listTypes("profile"))
	s.handle("GET /v1/profile-types/{type}", s.showType("profile"))
	s.handle("GET /v1/profile-types/{type}/hosts", s.listHosts)
	s.handle("GET /v1/profile-types/{type}/ops", s.listOperations)
	s.handle("GET /v1/policy-types", s.listTypes("policy"))
	s.handle("GET /v1/policy-types/{type}", s.showType("policy"))
	s.handle("GET /v1/plugins", s.listPlugins)
	s.handle("GET /v1/plugins/{name}", s.showPlugin)

	s.handle("GET /v1/profiles", s.listProfiles)
	s.handle("POST /v1/profiles", s.createProfile)
	s.handle("POST /v1/profiles/validate", s.validateProfile)
	s.handle("GET /v1/profiles/{id}", s.showProfile)
	s.handle("PATCH /v1/profiles/{id}", s.updateProfile)
	s.handle("DELETE /v1/profiles/{id}", s.deleteProfile, noBody)

	s.handle("GET /v1/policies", s.listPolicies)
	s.handle("POST /v1/policies", s.createPolicy)
	s.handle("POST /v1/policies/validate", s.validatePolicy)
	s.handle("GET /v1/policies/{id}", s.showPolicy)
	s.handle("PATCH /v1/policies/{id}", s.updatePolicy)
	s.handle("DELETE /v1/policies/{id}", s.deletePolicy, noBody)

	s.handle("GET /v1/clusters", s.listClusters)
	s.handle("POST /v1/clusters", s.createCluster)
	s.handle("GET /v1/clusters/{id}", s.showCluster)
	s.handle("PATCH /v1/clusters/{id}", s.updateCluster)
	s.handle("DELETE /v1/clusters/{id}", s.deleteCluster, withQuery("force"))
	s.handle("POST /v1/clusters/{id}/actions", s.clusterAction)
	s.handle("POST /v1/clusters/{id}/ops", s.clusterOperation)
	s.handle("GET /v1/clusters/{id}/attrs/{path}", s.clusterAttrs)
	s.handle("GET /v1/clusters/{id}/placement", s.clusterPlacement)
	s.handle("GET /v1/clusters/{id}/policies", s.listBindings)
	s.handle("GET /v1/clusters/{id}/policies/{policy}", s.showBinding)
	s.handle("GET /v1/clusters/{id}/dependencies", s.showDependencies)
	s.handle("PUT /v1/clusters/{id}/dependencies", s.putDependencies)

	s.handle("GET /v1/milestones", s.listMilestones)
	s.handle("POST /v1/milestones", s.createMilestone)
	s.handle("GET /v1/milestones/{id}", s.showMilestone)
	s.handle("PATCH /v1/milestones/{id}", s.updateMilestone)
	s.handle("DELETE /v1/milestones/{id}", s.deleteMilestone, noBody)
	s.handle("POST /v1/milestones/{id}/enter", s.enterMilestone, noBody)

	s.handle("GET /v1/nodes", s.listNodes)
	s.handle("POST /v1/nodes", s.createNode)
	s.handle("POST /v1/nodes/adopt", s.adoptNode)
	s.handle("POST /v1/nodes/adopt-preview", s.adoptPreview)
	s.handle("GET /v1/nodes/{id}", s.showNode)
	s.handle("PATCH /v1/nodes/{id}", s.updateNode)
	s.handle("DELETE /v1/nodes/{id}", s.deleteNode, withQuery("force"))
	s.handle("POST /v1/nodes/{id}/actions", s.nodeAction)
	s.handle("POST /v1/nodes/{id}/ops", s.nodeOperation)

	s.handle("GET /v1/actions", s.listActions)
	s.handle("GET /v1/actions/{id}", s.showAction)
	s.handle("PATCH /v1/actions/{id}", s.updateAction, withQuery("force"))

	s.handle("GET /v1/sets/{name}", s.showSet)
	s.handle("PUT /v1/sets/{name}/objects/{kind}/{id}", s.claimObject)
	s.handle("DELETE /v1/sets/{name}/objects/{kind}/{id}", s.releaseObject, noBody)
	s.handle("GET /v1/owners/{kind}/{id}", s.showOwner)

	s.handle("GET /v1/receivers", s.listReceivers)
	s.handle("POST /v1/receivers", s.createReceiver)
	s.handle("GET /v1/receivers/{id}", s.showReceiver)
	s.handle("PATCH /v1/receivers/{id}", s.updateReceiver)
	s.handle("DELETE /v1/receivers/{id}", s.deleteReceiver, noBody)
	s.handle("POST /v1/receivers/{id}/notify", s.notifyReceiver, noBody)
	// The webhook's secret in the path is its credential: no token.
	s.public("POST /v1/webhooks/{secret}/trigger", s.triggerWebhook, anyQuery)

	s.handle("GET /v1/hosts", s.listStoredHosts)
	s.handle("GET /v1/hosts/{name}", s.showHost)
	s.admin("PATCH /v1/hosts/{name}", s.updateHost)

	s.handle("GET /v1/events", s.listEvents)
	s.handle("GET /v1/events/{id}", s.showEvent)
	s.watchRoutes()

	s.admin("POST /v1/tokens", s.createToken)
	s.admin("GET /v1/tokens", s.listTokens)
	s.admin("GET /v1/tokens/{id}", s.showToken)
	s.admin("DELETE /v1/tokens/{id}", s.deleteToken, noBody)
	s.admin("GET /v1/projects/{project}/grants", s.listGrants)
	s.admin("PUT /v1/projects/{project}/grants/{type}", s.putGrant, noBody)
	s.admin("DELETE /v1/projects/{project}/grants/{type}", s.deleteGrant, noBody)

	// The console's files are public, like any page: they hold no data,
	// and every call they make to the API carries the user's token. They
	// are not in the route table (TestRouteAccess covers API routes).
	if s.opts.UI {
		s.mux.Handle("GET /ui/", ui.Handler())
		s.mux.Handle("GET /ui", http.RedirectHandler("/ui/", http.StatusMovedPermanently))
	}
}
