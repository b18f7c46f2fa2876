resource "grove_profile" "worker" {
  name       = "example-worker"
  type       = "local.process"
  version    = "1.0"
  properties = jsonencode({ command = ["sleep", "3600"] })
  lifecycle {
    create_before_destroy = true
  }
}

resource "grove_cluster" "workers" {
  name             = "example-workers"
  profile_id       = grove_profile.worker.id
  desired_capacity = 2
  min_size         = 1
  max_size         = 5
  metadata         = { owner = "example" }
  restart = {
    condition    = "any"
    delay        = "2s"
    max_attempts = 3
    window       = "1m"
  }
  update = {
    parallelism    = 1
    failure_action = "rollback"
    monitor        = "2s"
    order          = "start-first"
  }
  timeouts {
    create = "10m"
  }
}
