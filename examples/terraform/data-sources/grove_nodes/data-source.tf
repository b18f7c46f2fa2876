resource "grove_profile" "p" {
  name       = "example-ds-nodes"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({})
}

resource "grove_cluster" "c" {
  name             = "example-ds-nodes"
  profile_id       = grove_profile.p.id
  desired_capacity = 2
}

data "grove_nodes" "active" {
  cluster_id = grove_cluster.c.id
  status     = "ACTIVE"
  depends_on = [grove_cluster.c]
}

output "node_names" {
  value = [for n in data.grove_nodes.active.nodes : n.name]
}
