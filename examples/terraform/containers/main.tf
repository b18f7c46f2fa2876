# Web servers as containers on a Docker Engine API endpoint (Docker, or
# Podman's Docker API: `make engine-up`), with the image built by
# `grove demo-image`. Start the agent with DOCKER_HOST exported.
terraform {
  required_providers {
    grove = {
      source = "grovehq/grove"
    }
  }
}

variable "image" {
  type        = string
  default     = "localhost/grove-demo:latest"
  description = "The image the nodes run; a change rolls the cluster node by node."
}

resource "grove_profile" "web" {
  name    = "tf-containers-web"
  type    = "container.docker"
  version = "1.0"
  properties = jsonencode({
    image        = var.image
    memory       = 64
    stop_timeout = 2
  })
  lifecycle {
    create_before_destroy = true
  }
}

resource "grove_cluster" "web" {
  name             = "tf-containers"
  profile_id       = grove_profile.web.id
  desired_capacity = 2
  restart = {
    condition = "any"
    delay     = "1s"
  }
  update = {
    parallelism = 1
    monitor     = "2s"
  }
}

data "grove_nodes" "web" {
  cluster_id = grove_cluster.web.id
  depends_on = [grove_cluster.web]
}

output "addresses" {
  value = [for n in data.grove_nodes.web.nodes : "http://${n.address}/"]
}
