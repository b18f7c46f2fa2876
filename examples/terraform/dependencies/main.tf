# The three-tier stack of docs/dependencies.md from Terraform: app waits
# for db and restarts when db comes back from a fault; web waits for app
# and for /etc/hosts, and restarts on any stop of app. A cluster's
# dependency groups are its dependency_groups attribute (Terraform reserves
# depends_on); references order the work, so each cluster is created once
# what it waits on exists. Start `grove agent -dev` first; see
# docs/terraform.md for using the provider locally.
terraform {
  required_providers {
    grove = {
      source = "grovehq/grove"
    }
  }
}

resource "grove_profile" "server" {
  name       = "tf-deps-server"
  type       = "local.process"
  version    = "1.0"
  properties = jsonencode({ command = ["sleep", "3600"] })
  lifecycle {
    create_before_destroy = true
  }
}

resource "grove_cluster" "db" {
  name             = "tf-deps-db"
  profile_id       = grove_profile.server.id
  desired_capacity = 1
}

resource "grove_cluster" "app" {
  name             = "tf-deps-app"
  profile_id       = grove_profile.server.id
  desired_capacity = 2
  dependency_groups = {
    database = {
      grouping   = "require_all"
      restart_on = "error"
      members    = [grove_cluster.db.name]
    }
  }
}

resource "grove_cluster" "web" {
  name             = "tf-deps-web"
  profile_id       = grove_profile.server.id
  desired_capacity = 2
  dependency_groups = {
    backend = {
      grouping   = "require_all"
      restart_on = "restart"
      members    = [grove_cluster.app.name, "path:/etc/hosts"]
    }
  }
}

output "start_order" {
  value = [grove_cluster.db.name, grove_cluster.app.name, grove_cluster.web.name]
}
