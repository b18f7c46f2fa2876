# The quick start: three small HTTP servers as local processes. Each node
# runs Grove's own demo server on the port the engine gives it, so nothing
# but Go is needed. `go run . quickstart` applies this file.

grove {
  set = "quickstart"
}

variable "nodes" {
  type        = number
  default     = 3
  description = "How many web nodes to run."

  validation {
    condition     = var.nodes >= 1 && var.nodes <= 20
    error_message = "nodes must be between 1 and 20."
  }
}

locals {
  server = [grove_executable(), "demo-http"]
}

profile "web" {
  type    = "local.process"
  version = "1.0"

  properties {
    command      = local.server
    env          = { GREETING = "hello" }
    stop_timeout = 5
  }
}

policy "oldest_first" {
  type    = "senlin.policy.deletion"
  version = "1.1"

  properties {
    criteria = "OLDEST_FIRST"
  }
}

cluster "quickstart" {
  profile          = profile.web
  desired_capacity = var.nodes
  min_size         = 1
  max_size         = 10
  config           = { "node.name.format" = "web-$2I" }

  binding {
    policy = policy.oldest_first
  }

  restart {
    condition    = "on-failure"
    delay        = "1s"
    max_attempts = 5
    window       = "1m"
  }

  update {
    parallelism    = 1
    delay          = "1s"
    failure_action = "rollback"
    monitor        = "3s"
    order          = "start-first"
  }
}
