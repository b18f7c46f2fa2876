resource "grove_profile" "p" {
  name       = "example-ds-profile"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({ label = "x" })
}

data "grove_profile" "p" {
  id_or_name = grove_profile.p.id
}
