# Servers on OpenStack Nova. The agent reaches the cloud through OS_CLOUD
# (and its clouds.yaml) or the OS_* variables in its environment; cloud
# names a clouds.yaml cloud in the profile's context instead. The defaults
# name the local Nova's image and flavor (scripts/nova.sh).
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

variable "image" {
  type    = string
  default = "grove-image"
}

variable "flavor" {
  type        = string
  default     = "m1.tiny"
  description = "The flavor; a change resizes the servers one at a time."
}

resource "grove_profile" "server" {
  name    = "tf-nova-server"
  type    = "os.nova.server"
  version = "1.0"
  properties = jsonencode({
    context  = var.cloud == null ? null : { cloud = var.cloud }
    flavor   = var.flavor
    image    = var.image
    metadata = { role = "web" }
  })
  lifecycle {
    create_before_destroy = true
  }
}

resource "grove_cluster" "servers" {
  name             = "tf-nova"
  profile_id       = grove_profile.server.id
  desired_capacity = 2
  restart = {
    condition = "any"
    delay     = "1s"
  }
  update = {
    parallelism = 1
    monitor     = "1s"
  }
}

data "grove_nodes" "servers" {
  cluster_id = grove_cluster.servers.id
  depends_on = [grove_cluster.servers]
}

output "servers" {
  value = [for n in data.grove_nodes.servers.nodes : n.name]
}
