# Servers on OpenStack Nova. Start the agent with OS_CLOUD (and its
# clouds.yaml) or the OS_* variables exported; scripts/nova.sh up prints
# them for the local Nova, whose image and flavors the defaults below name.
# See docs/openstack.md.

grove {
  set = "nova"
}

variable "image" {
  type        = string
  default     = "grove-image"
  description = "The image, by name or id; a change rebuilds the servers one at a time."
}

variable "flavor" {
  type        = string
  default     = "m1.tiny"
  description = "The flavor, by name or id; a change resizes the servers one at a time."
}

variable "nodes" {
  type    = number
  default = 3

  validation {
    condition     = var.nodes >= 0 && var.nodes <= 50
    error_message = "nodes must be between 0 and 50."
  }
}

profile "server" {
  type    = "os.nova.server"
  version = "1.0"

  properties {
    flavor   = var.flavor
    image    = var.image
    metadata = { role = "web" }
  }
}

cluster "nova" {
  profile          = profile.server
  desired_capacity = var.nodes
  max_size         = 50
  config           = { "node.name.format" = "web-$2I" }

  restart {
    condition    = "any"
    delay        = "1s"
    max_attempts = 10
    window       = "5m"
  }

  update {
    parallelism = 1
    monitor     = "1s"
  }
}
