# Servers on OpenStack Nova kept on different hosts by the affinity policy
# (senlin.policy.affinity): attached, it creates an anti-affinity server
# group, and the servers a resize or scale-out adds boot in it. The agent
# reaches the cloud as for examples/terraform/nova; see docs/policies.md.
terraform {
  required_providers {
    grove = {
      source = "grovehq/grove"
    }
  }
}

variable "cloud" {
  type        = string
  default     = null
  description = "A cloud of the agent's clouds.yaml; null uses the agent's OS_CLOUD or OS_* variables."
}

variable "servers" {
  type        = number
  default     = 0
  description = "Servers to run: raise it once the policy is attached, so a resize places them (a cluster's creation is not checked, as in Senlin)."
}

resource "grove_profile" "server" {
  name    = "tf-spread-server"
  type    = "os.nova.server"
  version = "1.0"
  properties = jsonencode({
    context = var.cloud == null ? null : { cloud = var.cloud }
    flavor  = "m1.tiny"
    image   = "grove-image"
  })
}

resource "grove_cluster" "servers" {
  name             = "tf-spread"
  profile_id       = grove_profile.server.id
  desired_capacity = var.servers
  max_size         = 10
}

resource "grove_policy" "spread" {
  name    = "tf-spread"
  type    = "senlin.policy.affinity"
  version = "1.0"
  properties = jsonencode({
    servergroup = { name = "tf-spread", policies = "anti-affinity" }
  })
}

resource "grove_cluster_policy_attachment" "spread" {
  cluster_id = grove_cluster.servers.id
  policy_id  = grove_policy.spread.id
}
