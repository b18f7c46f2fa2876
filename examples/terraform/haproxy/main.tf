# Web servers behind HAProxy: a local.process cluster of grove's demo HTTP
# server whose nodes grove.policy.haproxy adds to (and drains from) the
# backend "app" of a running HAProxy through its runtime API, e.g. with
#   global
#     stats socket /run/haproxy/admin.sock mode 600 level admin
#   backend app
#     balance roundrobin
# and a frontend whose default_backend is app (docs/policies.md).
terraform {
  required_providers {
    grove = {
      source = "grovehq/grove"
    }
  }
}

variable "grove" {
  type        = string
  default     = "grove"
  description = "The grove binary the nodes run (its demo HTTP server)."
}

variable "haproxy_socket" {
  type        = string
  default     = "/run/haproxy/admin.sock"
  description = "HAProxy's runtime API: a stats socket at level admin (unix path or 127.0.0.1:PORT)."
}

resource "grove_profile" "web" {
  name    = "tf-haproxy-web"
  type    = "local.process"
  version = "1.0"
  properties = jsonencode({
    command = [var.grove, "demo-http"]
  })
}

resource "grove_cluster" "web" {
  name             = "tf-haproxy"
  profile_id       = grove_profile.web.id
  desired_capacity = 3
}

resource "grove_policy" "front" {
  name    = "tf-haproxy-front"
  type    = "grove.policy.haproxy"
  version = "1.0"
  properties = jsonencode({
    socket        = var.haproxy_socket
    backend       = "app"
    drain_timeout = 10
  })
}

resource "grove_cluster_policy_attachment" "front" {
  cluster_id = grove_cluster.web.id
  policy_id  = grove_policy.front.id
}
