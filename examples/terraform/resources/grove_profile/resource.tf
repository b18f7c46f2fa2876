resource "grove_profile" "web" {
  name    = "example-web"
  type    = "local.process"
  version = "1.0"
  properties = jsonencode({
    command      = ["sleep", "3600"]
    env          = { MODE = "example" }
    stop_timeout = 5
  })
  metadata = { team = "web" }
  # Specs are immutable: a change creates the new profile before the old one goes.
  lifecycle {
    create_before_destroy = true
  }
}
