resource "grove_policy" "oldest_first" {
  name       = "example-oldest-first"
  type       = "senlin.policy.deletion"
  version    = "1.1"
  properties = jsonencode({ criteria = "OLDEST_FIRST", grace_period = 0 })
}
