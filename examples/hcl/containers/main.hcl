# Web servers as containers on a Docker Engine API endpoint: Docker, or
# Podman's Docker-compatible service (`make engine-up` starts one and prints
# the DOCKER_HOST to export). The image is Grove's demo server; build it
# with `grove demo-image` (or `make demo-image`).
#
# Containers use host networking on 127.0.0.1: the engine gives each node a
# port, passed in as PORT, and never creates a bridge network.

grove {
  set = "containers"
}

variable "image" {
  type        = string
  default     = "localhost/grove-demo:latest"
  description = "The image every node runs; changing it rolls the cluster one node at a time."
}

variable "nodes" {
  type    = number
  default = 3

  validation {
    condition     = var.nodes >= 0 && var.nodes <= 50
    error_message = "nodes must be between 0 and 50."
  }
}

profile "web" {
  type    = "container.docker"
  version = "1.0"

  properties {
    image        = var.image
    env          = { GREETING = "hello" }
    memory       = 64
    stop_timeout = 2
  }
}

policy "youngest_first" {
  type    = "senlin.policy.deletion"
  version = "1.1"

  properties {
    criteria = "YOUNGEST_FIRST"
  }
}

cluster "containers" {
  profile          = profile.web
  desired_capacity = var.nodes
  max_size         = 50
  config           = { "node.name.format" = "box-$2I" }

  binding {
    policy = policy.youngest_first
  }

  restart {
    condition    = "any"
    delay        = "1s"
    max_attempts = 10
    window       = "5m"
  }

  update {
    parallelism    = 1
    monitor        = "2s"
    failure_action = "rollback"
  }
}
