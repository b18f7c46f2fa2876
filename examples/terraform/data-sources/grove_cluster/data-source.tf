resource "grove_profile" "p" {
  name       = "example-ds-cluster"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({})
}

resource "grove_cluster" "c" {
  name             = "example-ds-cluster"
  profile_id       = grove_profile.p.id
  desired_capacity = 1
}

data "grove_cluster" "c" {
  id_or_name = grove_cluster.c.name
}

output "status" {
  value = data.grove_cluster.c.status
}
