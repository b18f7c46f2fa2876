resource "grove_profile" "app" {
  name       = "example-app"
  type       = "grove.noop"
  version    = "1.0"
  properties = jsonencode({})
}

resource "grove_cluster" "app" {
  name             = "example-app"
  profile_id       = grove_profile.app.id
  desired_capacity = 3
}

resource "grove_policy" "youngest_first" {
  name       = "example-youngest-first"
  type       = "senlin.policy.deletion"
  version    = "1.1"
  properties = jsonencode({ criteria = "YOUNGEST_FIRST" })
}

resource "grove_cluster_policy_attachment" "youngest_first" {
  cluster_id = grove_cluster.app.id
  policy_id  = grove_policy.youngest_first.id
  enabled    = true
  priority   = 400
}
