# Three web nodes on the embedded default (local.process), as `grove
# quickstart` runs, from Terraform. Start `grove agent -dev` first; see
# docs/terraform.md for using the provider locally.
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

variable "nodes" {
  type    = number
  default = 3
}

resource "grove_profile" "web" {
  name    = "tf-quickstart-web"
  type    = "local.process"
  version = "1.0"
  properties = jsonencode({
    command = [var.grove, "demo-http"]
  })
  lifecycle {
    create_before_destroy = true
  }
}

resource "grove_policy" "oldest_first" {
  name       = "tf-quickstart-oldest-first"
  type       = "senlin.policy.deletion"
  version    = "1.1"
  properties = jsonencode({ criteria = "OLDEST_FIRST" })
}

resource "grove_cluster" "web" {
  name             = "tf-quickstart"
  profile_id       = grove_profile.web.id
  desired_capacity = var.nodes
  config           = { "node.name.format" = "web-$2I" }
  restart = {
    condition = "on-failure"
    delay     = "1s"
  }
}

resource "grove_cluster_policy_attachment" "oldest_first" {
  cluster_id = grove_cluster.web.id
  policy_id  = grove_policy.oldest_first.id
}

data "grove_nodes" "web" {
  cluster_id = grove_cluster.web.id
  depends_on = [grove_cluster.web]
}

output "addresses" {
  value = [for n in data.grove_nodes.web.nodes : "http://${n.address}/"]
}
