resource "grove_profile" "single" {
  name       = "example-single"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({ label = "standalone" })
}

resource "grove_node" "single" {
  name       = "example-node"
  profile_id = grove_profile.single.id
  role       = "primary"
}
